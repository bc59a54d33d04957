package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/pattern"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/serverlog"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// Every stored report goes into check_history with what the reading
// account counted; History gives it back, with the device failures on the
// destination's incident timeline, by destination and by file server, and
// forgets checks past HistoryKept.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	for _, n := range []string{"a", "b"} {
		if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: n, Host: "FS1", Share: "limited", User: "u", Password: scanwarden.NewSecret("p")}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	old := smbcheck.Report{Started: now.Add(-31 * 24 * time.Hour), Target: scanwarden.TargetInfo{Host: "FS1"}, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}
	if err := s.Reports().AddReport(ctx, "a", old); err != nil {
		t.Fatal(err)
	}
	boot := now.Add(-2 * time.Hour)
	for i := 0; i < 6; i++ {
		at := now.Add(time.Duration(i-6) * time.Minute)
		rep := smbcheck.Report{Started: at, Target: scanwarden.TargetInfo{Host: "FS1"}, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}
		rep.ServerLog = &serverlog.Story{Share: &serverlog.ShareUses{Share: "limited", Current: 0, Max: 2}}
		if i%2 == 1 {
			rep.Verdict.Cause = scanwarden.CauseConnectionLimit
			rep.ServerLog.Share.Current = 2
			rep.ServerLog.Boots = []time.Time{boot}
		}
		if err := s.Reports().AddReport(ctx, "a", rep); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Reports().AddReport(ctx, "b", smbcheck.Report{Started: now.Add(-time.Minute), Target: scanwarden.TargetInfo{Host: "fs1"}, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Incidents().UpdateIncident(ctx, "a", func(cur *incident.Incident) incident.Result {
		return incident.Next(cur, incident.Input{Kind: incident.KindDeviceFailure, At: now.Add(-3 * time.Minute), Device: "mfp01", Code: "1102"}, now.Add(-3*time.Minute), time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	h, err := s.History().History(ctx, Of{Destination: "A"}, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Checks) != 6 || len(h.Reports) != 1 || h.Reports[0].Device != "mfp01" {
		t.Fatalf("history: %d checks, reports %+v", len(h.Checks), h.Reports)
	}
	c := h.Checks[1]
	if c.OK || c.Cause != "connection-limit" || c.Sessions != 2 || c.Limit != 2 || !c.ServerStart.Equal(boot) || !h.Checks[0].OK || h.Checks[0].Sessions != 0 {
		t.Errorf("checks %+v", h.Checks[:2])
	}
	e := pattern.Explain(h)
	if !e.Has(pattern.KindSessionLimit) || !strings.Contains(e.Sentence, "fails whenever 2 of 2 sessions are open (3 of 3 failures with a count)") {
		t.Errorf("sentence %q", e.Sentence)
	}
	hs, err := s.History().History(ctx, Of{Host: "fs1"}, now, 0)
	if err != nil || len(hs.Checks) != 7 || len(hs.Reports) != 1 {
		t.Fatalf("server history: %d checks, %d reports, %v", len(hs.Checks), len(hs.Reports), err)
	}
	var n int
	s.db.QueryRow("SELECT count(*) FROM check_history WHERE at < ?", formatTime(now.Add(-HistoryKept))).Scan(&n)
	if n != 0 {
		t.Errorf("%d checks past %s kept", n, HistoryKept)
	}
}
