package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/summary"
	"github.com/scanwarden/scanwarden/web/webtest"
)

// The test site's state: reception fails (bad-credentials, its incident
// opened at 09:00, one scan held), accounts was never checked.
const failingSentence = "1 destination failing: reception — bad-credentials since 09:00, 1 scan held"

// makeHealthy turns the test site's fleet green: every destination passed
// its last check, no incident open.
func (s *site) makeHealthy() {
	ok := &registry.ReportView{At: s.clock.Now(), Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}, Trigger: "manual"}
	for i := range s.fleet.destinations {
		s.fleet.destinations[i].Last, s.fleet.destinations[i].OpenIncident = ok, 0
	}
	s.srv.cfg.Incidents.(*fakeIncidents).list = nil
}

func TestSummaryAPI(t *testing.T) {
	s := newSite(t)
	c := s.login()
	resp, body := s.get(c, "/api/v1/summary")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/summary: %s %s", resp.Status, body)
	}
	var got summary.Summary
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.State != summary.StateFailing || got.Sentence != failingSentence || got.HeldScans != 1 ||
		got.OldestIncident == nil || got.OldestIncident.ID != 7 || len(got.Failing) != 1 || got.Failing[0].Destination != "reception" {
		t.Errorf("summary = %s", body)
	}
	// The overview carries the same sentence and the control.
	_, page := s.get(c, "/")
	for _, want := range []string{`id="headline-sentence">1 destination failing: reception — bad-credentials since 09:00, 1 scan held<`,
		`action="/check-all"`, `id="headline-incident">#7 reception<`} {
		if !strings.Contains(page, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
	// Check all now: through the scheduler, audited, then the page says so.
	resp, _ = s.post(c, "/check-all", nil, map[string]string{"Origin": s.ts.URL})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?done=check-all&n=2" || s.checkAll.calls() != 1 {
		t.Fatalf("POST /check-all: %s to %q, %d calls", resp.Status, resp.Header.Get("Location"), s.checkAll.calls())
	}
	resp, body = s.post(c, "/api/v1/check-all", nil, nil)
	var q struct{ Queued int }
	json.Unmarshal([]byte(body), &q)
	if resp.StatusCode != http.StatusAccepted || q.Queued != 2 || s.checkAll.calls() != 2 {
		t.Errorf("POST /api/v1/check-all: %s %s", resp.Status, body)
	}
	if a, _ := s.auth.Audit(context.Background(), 10); len(a) == 0 || a[0].Action != "destinations.check_all" {
		t.Errorf("audit: %+v", a)
	}
	s.makeHealthy()
	_, body = s.get(c, "/api/v1/summary")
	got = summary.Summary{}
	json.Unmarshal([]byte(body), &got)
	if got.State != summary.StateOK || got.Sentence != "All 2 destinations accept scans" {
		t.Errorf("healthy summary: %s", body)
	}
}

// TestBrowserHeadline: headless Chromium reads the overview's sentence in
// the failing case, presses "Check all now" (a same-origin POST the
// browser makes itself) and reads the healthy sentence after it.
func TestBrowserHeadline(t *testing.T) {
	b := webtest.Start(t, 60*time.Second)
	s := newSite(t)
	b.Login(t, s.ts.URL, testPassword)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(s.ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`#headline-sentence`))); err != nil {
		t.Fatal(err)
	}
	if got := b.Text(t, `#headline-sentence`); got != failingSentence {
		t.Errorf("failing: headline %q, want %q", got, failingSentence)
	}
	if got := b.Text(t, `#headline-held`); got != "1 scan held" {
		t.Errorf("held: %q", got)
	}
	s.makeHealthy()
	if err := chromedp.Do(b.Ctx, chromedp.Click(chromedp.CSS(`#check-all`)), chromedp.WaitVisible(chromedp.CSS(`p.flash`))); err != nil {
		t.Fatal(err)
	}
	if s.checkAll.calls() != 1 {
		t.Errorf("Check all now reached the scheduler %d times", s.checkAll.calls())
	}
	if got := b.Text(t, `#headline-sentence`); got != "All 2 destinations accept scans" {
		t.Errorf("healthy: headline %q", got)
	}
}
