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
	r := newRig(t, Config{Interval: 24 * time.Hour, Jitter: time.Minute}, func(context.Context, scanwarden.Target) smbcheck.Verdict {
		return smbcheck.Verdict{Cause: scanwarden.CauseOK}
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
	settled(t, r.m)
	if n := r.rep.count("same"); n != 0 {
		t.Errorf("the unchanged destination was checked %d times", n)
	}
	// Re-reading an unchanged list checks nothing again.
	before := r.chk.calls.Load()
	r.m.Reload()
	settled(t, r.m)
	if got := r.chk.calls.Load(); got != before {
		t.Errorf("an unchanged re-read checked %d more", got-before)
	}
}

// settled waits until the list was re-read and the round after it has
// nothing queued or running, every destination next due more than an hour
// away: a destination wrongly made due would by then have been checked
// (its check ends before running drops) or still be due now.
func settled(t *testing.T, m *Monitor) {
	t.Helper()
	settledBeyond(t, m, time.Hour)
}

// settledBeyond is settled with every destination next due more than
// horizon away.
func settledBeyond(t *testing.T, m *Monitor, horizon time.Duration) {
	t.Helper()
	waitFor(t, "the re-read list scheduled", func() bool {
		if m.list.stale(false) || m.busy() {
			return false
		}
		return m.times.beyond(m.list.list(), time.Now().Add(horizon))
	})
}

// beyond says whether every destination of ds is next due after horizon.
func (t *timetable) beyond(ds []Destination, horizon time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range ds {
		if next, ok := t.nextDue[key(d.Name)]; !ok || next.Before(horizon) {
			return false
		}
	}
	return true
}
