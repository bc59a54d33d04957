package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// A destination's folder is shown as the admin types it on the panel or in
// Windows: \\host\share\path, one kind of separator, the port beside it.
func TestFolderShownAsUNC(t *testing.T) {
	s := newSite(t)
	d := &s.fleet.destinations[1] // accounts, on device evil
	d.Port, d.Path = 139, `2026/q4\in`
	c := s.login()
	const want = `<code>\\fs1.kyolab.test\finance\2026\q4\in</code> port 139`
	for _, p := range []string{"/", "/devices/evil", "/destinations/accounts"} {
		_, body := s.get(c, p)
		if !strings.Contains(body, want) {
			t.Errorf("%s: no %s", p, want)
		}
		if strings.Contains(body, "//fs1") || strings.Contains(body, "fs1.kyolab.test:139") {
			t.Errorf("%s: still shows //host/share", p)
		}
	}
	// The default port is not shown.
	_, body := s.get(c, "/destinations/reception")
	if !strings.Contains(body, `<code>\\fs1.kyolab.test\scans\m1</code></dd>`) {
		t.Errorf("reception: folder not as typed on the panel")
	}
	if got := scanwarden.UNC("fs1", "scans", "/a//b/"); got != `\\fs1\scans\a\b` {
		t.Errorf("UNC: %s", got)
	}
}

// storeOnCheck makes the site's checker store each report in the fake fleet
// (report and history), as the daemon's does.
func storeOnCheck(s *site) {
	s.check = func(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		r := sampleReport(dest)
		for _, st := range r.Steps {
			progress(st)
		}
		storeReport(s, dest, r)
		return r, nil
	}
}

// storeReport keeps r as dest's newest report and history row (trigger
// "manual") in the fake fleet.
func storeReport(s *site, dest string, r smbcheck.Report) {
	for i := range s.fleet.destinations {
		if d := &s.fleet.destinations[i]; d.Name == dest {
			d.Report = &r
			d.Last = &registry.ReportView{At: r.Started, Verdict: r.Verdict, Trigger: "manual"}
			s.fleet.history[dest] = append([]registry.ReportView{*d.Last}, s.fleet.history[dest]...)
		}
	}
}

// After a check the page no longer says "Never checked." / "No checks
// yet.": once the stream says "end" the page the script fetches is fresh
// (the cache was dropped before), and the script swaps in its stored-report
// and history sections.
func TestCheckRefreshesStoredReport(t *testing.T) {
	s := newSite(t)
	storeOnCheck(s)
	c := s.login()
	_, before := s.get(c, "/destinations/accounts") // now in the page cache
	if !strings.Contains(before, "Never checked.") || !strings.Contains(before, "No checks yet.") {
		t.Fatal("accounts has a report before any check")
	}
	if !strings.Contains(before, `<section id="history">`) || !strings.Contains(before, `id="last-report"`) {
		t.Fatal("the sections the script refreshes have no id")
	}
	_, js := s.get(c, "/static/check.js")
	if !strings.Contains(js, `["verdict-line", "last-report", "history"]`) {
		t.Fatal("check.js does not refresh the verdict line, stored-report and history sections")
	}

	resp, body := s.post(c, "/destinations/accounts/check", nil, map[string]string{"Accept": "application/json"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start: %s %s", resp.Status, body)
	}
	var start struct{ Events string }
	json.Unmarshal([]byte(body), &start)
	sresp, err := c.Get(s.ts.URL + start.Events)
	if err != nil {
		t.Fatal(err)
	}
	stream, _ := io.ReadAll(sresp.Body) // to "end"
	sresp.Body.Close()
	if !strings.Contains(string(stream), "event: end") {
		t.Fatalf("stream: %s", stream)
	}
	// What the script fetches at "end" (no clock step: the cache must have
	// been dropped by the check itself).
	_, after := s.get(c, "/destinations/accounts")
	if strings.Contains(after, "Never checked.") || strings.Contains(after, "No checks yet.") {
		t.Error("the page after the check still says it was never checked")
	}
	if !strings.Contains(after, "Last report") || !strings.Contains(after, ">manual<") {
		t.Error("the page after the check lacks the stored report or its history row")
	}

	// Without script: the form waits for the check and the page it lands on
	// shows the stored report and history too.
	s2 := newSite(t)
	storeOnCheck(s2)
	c2 := s2.login()
	s2.get(c2, "/destinations/accounts")
	resp, _ = s2.post(c2, "/destinations/accounts/check", nil, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("no-script check: %s", resp.Status)
	}
	_, after = s2.get(c2, resp.Header.Get("Location"))
	if strings.Contains(after, "Never checked.") || strings.Contains(after, "No checks yet.") || !strings.Contains(after, ">manual<") {
		t.Error("no-script: the page after the check does not show the stored report and history")
	}
}

// TestAuditShowsTimesReadably: an anonymous row's first attempt is shown
// as the page's other times are, not as the stored RFC 3339 text.
func TestAuditShowsTimesReadably(t *testing.T) {
	s := newSite(t)
	c := s.login()
	first := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s.auth.AddAudit(context.Background(), scanwarden.AuditEntry{At: first.Add(time.Hour), First: first,
		Actor: scanwarden.AnonymousActor, Client: "192.0.2.7", Action: "login.failed", Target: "admin", Count: 12})
	_, body := s.get(c, "/audit")
	if want := "first at " + first.Local().Format("2006-01-02 15:04:05"); !strings.Contains(body, want) || strings.Contains(body, "T10:00:00") {
		t.Fatalf("audit page: want %q and no RFC 3339 text", want)
	}
}

// TestCheckAllOnlyWithDestinations: "Check all now" is not offered when
// there is nothing to check.
func TestCheckAllOnlyWithDestinations(t *testing.T) {
	s := newSite(t)
	c := s.login()
	if _, body := s.get(c, "/"); !strings.Contains(body, `id="check-all"`) {
		t.Fatal("no Check all now with destinations")
	}
	s.fleet.destinations = nil
	s.fleet.history = nil
	if _, body := s.get(c, "/?fresh=1"); strings.Contains(body, `id="check-all"`) {
		t.Fatal("Check all now shown with nothing to check")
	}
}
