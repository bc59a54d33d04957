package monitor

import (
	"context"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// Check on arrival: with a day's interval, a destination added (an
// import) and one whose password is edited are checked at once after the
// list is re-read; one left as it was is not.
func TestCheckOnArrival(t *testing.T) {
	same, edited := dest("same", "fs1", "MFP01"), dest("edited", "fs2", "MFP01")
	for _, d := range []*Destination{&same, &edited} {
		d.LastCheck = time.Now() // checked just now: due in a day
		d.Target.Password = scanwarden.NewSecret("old")
	}
	r := newRig(t, Config{Interval: 24 * time.Hour, Jitter: time.Minute}, func(context.Context, smbcheck.Target) smbcheck.Verdict {
		return smbcheck.Verdict{Cause: smbcheck.CauseOK}
	}, same, edited)
	waitFor(t, "the first list", func() bool { return r.m.Stats().Destinations == 2 })
	if r.chk.calls.Load() != 0 {
		t.Fatalf("%d checks before anything arrived", r.chk.calls.Load())
	}
	added := dest("added", "fs3", "MFP01")
	r.reg.mu.Lock()
	r.reg.dests[1].Target.Password = scanwarden.NewSecret("new")
	r.reg.dests = append(r.reg.dests, added)
	r.reg.mu.Unlock()
	r.m.Reload()
	waitFor(t, "the added and the edited destination checked", func() bool {
		return r.rep.count("added") == 1 && r.rep.count("edited") == 1
	})
	time.Sleep(50 * time.Millisecond) // ten scheduling rounds
	if n := r.rep.count("same"); n != 0 {
		t.Errorf("the unchanged destination was checked %d times", n)
	}
	// Re-reading an unchanged list checks nothing again.
	before := r.chk.calls.Load()
	r.m.Reload()
	waitFor(t, "the list re-read", func() bool { return r.m.Stats().Destinations == 3 })
	time.Sleep(50 * time.Millisecond)
	if got := r.chk.calls.Load(); got != before {
		t.Errorf("an unchanged re-read checked %d more", got-before)
	}
}
