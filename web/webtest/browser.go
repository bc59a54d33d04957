// Package webtest drives Debian's headless Chromium (chromedp) against the
// scanwarden web server, for the browser tests of web/ and of the whole
// daemon. A test that needs the browser skips, saying so, when Chromium is
// not installed.
package webtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/scanwarden/scanwarden/testlab"
)

// Browser is one headless Chromium with a fresh profile and one tab.
type Browser struct {
	Ctx context.Context
	// Downloads is the folder downloads land in.
	Downloads string

	mu        sync.Mutex
	dialogs   []string
	downloads map[string]string // guid → state
}

// ChromiumPath finds Debian's chromium, "" when absent.
func ChromiumPath() string {
	for _, p := range []string{os.Getenv("SCANWARDEN_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	return ""
}

// Start launches Chromium headless (or skips the test when there is none).
// Every page gets timeout to finish; the browser ends with the test. extra
// are more command-line options (e.g. TrustSPKI).
func Start(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) *Browser {
	t.Helper()
	bin := ChromiumPath()
	if bin == "" {
		testlab.Missing(t, "browser test skipped: Debian's chromium is not installed (apt-get install chromium, or sudo testlab/deps)")
	}
	profile := t.TempDir()
	b := &Browser{Downloads: t.TempDir(), downloads: map[string]string{}}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })

	// Starting the first tab starts the browser.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			b.mu.Lock()
			b.dialogs = append(b.dialogs, string(e.Type)+": "+e.Message)
			b.mu.Unlock()
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	if err == nil {
		err = chromedp.ListenBrowser(ctx, func(ev any) {
			if e, ok := ev.(*browser.EventDownloadProgress); ok {
				b.mu.Lock()
				b.downloads[e.GUID] = e.State.String()
				b.mu.Unlock()
			}
		})
	}
	if err == nil {
		on := true
		_, err = chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: b.Downloads, EventsEnabled: &on})
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b.Ctx = ctx
	return b
}

// TrustSPKI makes Chromium accept a certificate whose public key has this
// base64 SHA-256 (webcert's SPKIHash) — as an admin who compared the
// fingerprint accepts the box's self-signed certificate — and no other
// certificate error.
func TrustSPKI(spki string) chromedp.ExecAllocatorOption {
	return chromedp.Flag("ignore-certificate-errors-spki-list", spki)
}

// Dialogs returns the JavaScript dialogs (alert, confirm, …) that opened.
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// Login logs in as admin through the form.
func (b *Browser) Login(t testing.TB, base, password string) {
	t.Helper()
	err := chromedp.Do(b.Ctx,
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SetValue(chromedp.CSS(`input[name=password]`), password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.logout`)),
	)
	if err != nil {
		t.Fatalf("log in: %v", err)
	}
}

// WaitDownload waits for a completed download and returns its bytes.
func (b *Browser) WaitDownload(t testing.TB, within time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		for guid, state := range b.downloads {
			if state == "completed" {
				b.mu.Unlock()
				data, err := os.ReadFile(filepath.Join(b.Downloads, guid))
				if err != nil {
					t.Fatalf("read download: %v", err)
				}
				return data
			}
		}
		b.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no download completed within %s", within)
	return nil
}

// Screenshot saves the whole page as a PNG when dir is not "" (for a
// person to look at).
func (b *Browser) Screenshot(t testing.TB, dir, name string, width int64) {
	t.Helper()
	if dir == "" {
		return
	}
	var opts []chromedp.EmulateViewportOption
	if width < 600 {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
	}
	err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(width, 900, opts...))
	var buf []byte
	if err == nil {
		buf, err = chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644)
	}
	if err == nil {
		err = chromedp.Do(b.Ctx, chromedp.EmulateReset(), chromedp.EmulateViewport(1280, 900))
	}
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}

// Text returns the text of the first element matching sel.
func (b *Browser) Text(t testing.TB, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// Count returns how many elements match the CSS selector sel.
func (b *Browser) Count(sel string) (int, error) {
	return chromedp.Run(b.Ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

// WaitCount waits until at least n elements match sel.
func (b *Browser) WaitCount(sel string, n int, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	for {
		got, err := b.Count(sel)
		if err != nil || got >= n {
			return got, err
		}
		if time.Now().After(deadline) {
			return got, errors.New("timed out waiting for " + sel)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Escaped reports whether s appears as text (not as markup) in the page.
func (b *Browser) Escaped(t testing.TB, s string) bool {
	t.Helper()
	text, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(text, s)
}
