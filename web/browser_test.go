package web

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/web/webtest"
)

// TestBrowser drives headless Chromium over the site with fake backends:
// log in, import an address book, run a check and watch its steps arrive
// one by one, a hostile sysName shown as text with no dialog, download a
// held scan. WEB_SCREENSHOTS=DIR saves a PNG of each page for a person.
// The same flow against the lab and the real daemon runs in the daemon's
// tests.
func TestBrowser(t *testing.T) {
	b := webtest.Start(t, 90*time.Second)
	s := newSite(t)
	shots := os.Getenv("WEB_SCREENSHOTS")
	release := make(chan struct{})
	s.check = func(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		r := sampleReport(dest)
		for i, st := range r.Steps {
			if i > 0 {
				select {
				case <-release:
				case <-ctx.Done():
					return smbcheck.Report{}, ctx.Err()
				}
			}
			progress(st)
		}
		storeReport(s, dest, r)
		return r, nil
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b.Ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	b.Screenshot(t, shots, "login", 1280)
	b.Login(t, s.ts.URL, testPassword)
	b.Screenshot(t, shots, "dashboard", 1280)
	b.Screenshot(t, shots, "dashboard-phone", 390)

	// Import an address book: preview, then confirm.
	book := filepath.Join(t.TempDir(), "book.xml")
	os.WriteFile(book, []byte("sales,//fs1.kyolab.test/scans/sales,KYOLAB\\sales\n"), 0o600)
	do("import preview",
		chromedp.Navigate(s.ts.URL+"/import"),
		chromedp.SetValue(chromedp.CSS(`input[name=device]`), "mfp01"),
		chromedp.SetUploadFiles(chromedp.CSS(`input[name=export]`), []string{book}),
		chromedp.Click(chromedp.CSS(`#import-preview`)),
		chromedp.WaitVisible(chromedp.CSS(`#import-confirm`)),
	)
	if len(s.fleet.destinations) != 2 {
		t.Fatal("the preview stored something")
	}
	b.Screenshot(t, shots, "import-preview", 1280)
	do("import confirm", chromedp.Click(chromedp.CSS(`#import-confirm`)), chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	if len(s.fleet.destinations) != 3 {
		t.Fatalf("import: %d destinations", len(s.fleet.destinations))
	}

	// Open the imported destination and run a check: each step appears
	// while the next is still held back by the checker.
	do("open destination", chromedp.Navigate(s.ts.URL+"/destinations/sales"), chromedp.WaitVisible(chromedp.CSS(`#check-form[data-live]`)))
	do("run check", chromedp.Click(chromedp.CSS(`#run-check`)))
	for want := 1; want <= 3; want++ {
		n, err := b.WaitCount(`#live-steps li`, want, 10*time.Second)
		if err != nil || n != want {
			t.Fatalf("waiting for step %d: saw %d (%v)", want, n, err)
		}
		if want < 3 {
			if v, _ := b.Count(`#live-verdict:not([hidden])`); v != 0 {
				t.Fatal("the verdict showed before the last step")
			}
			release <- struct{}{}
		}
	}
	do("verdict", chromedp.WaitVisible(chromedp.CSS(`#live-verdict`)))
	if v := b.Text(t, `#live-verdict`); !strings.Contains(v, "bad-credentials") || !strings.Contains(v, "1102") {
		t.Errorf("live verdict %q", v)
	}
	if st := b.Text(t, `#live-steps li:nth-child(3)`); !strings.Contains(st, hostile) {
		t.Errorf("step detail %q: the hostile text is not shown as text", st)
	}
	do("check done", chromedp.WaitEnabled(chromedp.CSS(`#run-check`)))
	// The stored-report and history sections were refreshed from the
	// server: no "Never checked." / "No checks yet." below the verdict.
	if txt := b.Text(t, `main`); strings.Contains(txt, "Never checked.") || strings.Contains(txt, "No checks yet.") {
		t.Errorf("after the check the page still says it was never checked: %q", txt)
	}
	if h := b.Text(t, `#history`); !strings.Contains(h, "manual") || !strings.Contains(h, "bad-credentials") {
		t.Errorf("history after the check: %q", h)
	}
	// The verdict line at the top (above the details card, on a phone too)
	// was refreshed from the stored report.
	if v := b.Text(t, `#verdict-line`); !strings.Contains(v, "bad-credentials") || !strings.Contains(v, "1102") {
		t.Errorf("verdict line after the check: %q", v)
	}
	b.Screenshot(t, shots, "destination-checked", 1280)
	b.Screenshot(t, shots, "destination-phone", 390)

	// A device whose sysName is markup: shown as text, no element, no dialog.
	do("hostile device", chromedp.Navigate(s.ts.URL+"/devices/evil"), chromedp.WaitVisible(chromedp.CSS(`dl.grid`)))
	if !b.Escaped(t, hostile) {
		t.Error("the hostile sysName is not on the page as text")
	}
	if n, _ := b.Count(`main img, main script`); n != 0 {
		t.Errorf("%d img/script elements in the device page", n)
	}
	b.Screenshot(t, shots, "device-hostile", 1280)
	do("dashboard", chromedp.Navigate(s.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
	if n, _ := b.Count(`main img`); n != 0 || !b.Escaped(t, hostile) {
		t.Error("dashboard renders the hostile name as markup")
	}

	// Download a held scan.
	do("receiver", chromedp.Navigate(s.ts.URL+"/receiver"), chromedp.WaitVisible(chromedp.CSS(`a[href="/receiver/scans/1/download"]`)))
	b.Screenshot(t, shots, "receiver", 1280)
	do("download", chromedp.Click(chromedp.CSS(`a[href="/receiver/scans/1/download"]`)))
	if got := b.WaitDownload(t, 10*time.Second); !bytes.Equal(got, s.recv.content[1]) {
		t.Errorf("downloaded %q, want %q", got, s.recv.content[1])
	}

	for _, p := range []string{"settings", "incidents/7", "events", "audit"} {
		do(p, chromedp.Navigate(s.ts.URL+"/"+p), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
		b.Screenshot(t, shots, strings.ReplaceAll(p, "/", "-"), 1280)
	}
	if d := b.Dialogs(); len(d) != 0 {
		t.Errorf("dialogs fired: %v", d)
	}
}
