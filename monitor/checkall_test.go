package monitor

import (
	"context"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// "Check all now" checks every destination at once, none of them due, and
// still one at a time per file server and at most MaxConcurrent in all.
func TestCheckAll(t *testing.T) {
	var dests []Destination
	for i, host := range []string{"fs1", "fs1", "fs1", "fs2", "fs2", "fs3"} {
		d := dest(string(rune('a'+i)), host, "MFP01")
		d.LastCheck = time.Now() // checked just now: not due for an hour
		dests = append(dests, d)
	}
	r := newRig(t, Config{Interval: time.Hour, Jitter: time.Minute, MaxConcurrent: 2}, func(context.Context, scanwarden.Target) smbcheck.Verdict {
		time.Sleep(5 * time.Millisecond)
		return smbcheck.Verdict{Cause: scanwarden.CauseOK}
	}, dests...)
	n, err := r.m.CheckAll(context.Background())
	if err != nil || n != len(dests) {
		t.Fatalf("CheckAll = %d, %v; want %d", n, err, len(dests))
	}
	waitFor(t, "every destination checked", func() bool {
		for _, d := range dests {
			if r.rep.count(d.Name) < 1 {
				return false
			}
		}
		return true
	})
	r.chk.mu.Lock()
	defer r.chk.mu.Unlock()
	if r.chk.maxServer != 1 || r.chk.maxAll > 2 {
		t.Errorf("per server %d (want 1), all %d (want ≤ 2)", r.chk.maxServer, r.chk.maxAll)
	}
	if got := r.chk.calls.Load(); got != int64(len(dests)) {
		t.Errorf("%d checks, want %d (one each)", got, len(dests))
	}
}

// A destination whose imported password is unreadable is checked as such:
// its report says so, an incident opens, and nothing is replayed.
func TestPasswordUnreadableChecked(t *testing.T) {
	d := dest("walt", "fs1", "MFP01")
	d.PasswordUnreadable = "SmbLoginPasswd: encrypted password: not hex"
	r := newRig(t, Config{}, nil, d)
	res, err := r.m.CheckNow(context.Background(), "walt", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict.Cause != scanwarden.CausePasswordUnreadable || r.chk.calls.Load() != 0 {
		t.Errorf("verdict %s, %d replays", res.Report.Verdict.Cause, r.chk.calls.Load())
	}
	if res.Incident == nil || res.Incident.Cause != scanwarden.CausePasswordUnreadable {
		t.Errorf("incident %+v", res.Incident)
	}
}

// TestAdminChecksAsked: a check an admin asks for (CheckNow, CheckAll)
// reaches the checker with the time it was asked, so that it learns the
// server afresh; a scheduled check carries none and uses what serve
// remembers.
func TestAdminChecksAsked(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	r := newRig(t, Config{Interval: time.Hour, Now: func() time.Time { return at }}, nil, dest("reception", "fs1", "MFP01"))
	waitFor(t, "the scheduled check", func() bool { return r.rep.count("reception") == 1 })
	if _, err := r.m.CheckNow(context.Background(), "reception", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.CheckAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the check of all", func() bool { return r.rep.count("reception") == 3 })
	r.chk.mu.Lock()
	defer r.chk.mu.Unlock()
	want := []time.Time{{}, at, at}
	if len(r.chk.asked) != 3 || !r.chk.asked[0].Equal(want[0]) || !r.chk.asked[1].Equal(want[1]) || !r.chk.asked[2].Equal(want[2]) {
		t.Fatalf("asked at %v; want %v (scheduled, check now, check all)", r.chk.asked, want)
	}
}
