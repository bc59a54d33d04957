package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/web/webtest"
)

// TestBrowserBridge drives headless Chromium over the destination page's
// bridge: the offer's Bridge button bridges the destination (a real form
// POST, through the site's cross-origin protection), the page then shows
// the bridge's own health, and End the bridge returns to the offer.
func TestBrowserBridge(t *testing.T) {
	b := webtest.Start(t, 90*time.Second)
	s := newSite(t)
	own := smbcheck.Verdict{Cause: scanwarden.CauseOK}
	rep := *s.fleet.destinations[0].Report
	rep.Verdict = smbcheck.Verdict{Cause: scanwarden.CauseEncryptionRequired, KyoceraCode: "1102", Summary: "The share requires SMB3 encryption."}
	rep.Bridge = &smbcheck.Bridge{Offered: true, DeviceCause: scanwarden.CauseEncryptionRequired, Own: &own}
	rep.Bridge.Named("reception")
	s.fleet.destinations[0].Report = &rep
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b.Ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	b.Login(t, s.ts.URL, testPassword)
	do("the offer", chromedp.Navigate(s.ts.URL+"/destinations/reception"), chromedp.WaitVisible(chromedp.CSS(`#bridge-on`)))
	if m := b.Text(t, `#bridge-message`); !strings.Contains(m, "the MFP cannot meet this server's demands (encryption-required); scanwarden can: bridge it") {
		t.Errorf("offer %q", m)
	}
	do("bridge", chromedp.Click(chromedp.CSS(`#bridge-on`)), chromedp.WaitVisible(chromedp.CSS(`#bridge-off`)))
	if st := b.Text(t, `#bridge-state`); st != "ok" {
		t.Errorf("bridge state %q", st)
	}
	if sh := b.Text(t, `#bridge-share`); !strings.Contains(sh, "serving") {
		t.Errorf("share %q", sh)
	}
	if s.fleet.destinations[0].Bridge == nil {
		t.Fatal("the button did not bridge it")
	}
	do("end the bridge", chromedp.Click(chromedp.CSS(`#bridge-off`)), chromedp.WaitVisible(chromedp.CSS(`#bridge-on`)))
	if s.fleet.destinations[0].Bridge != nil {
		t.Error("End the bridge did not end it")
	}
}
