package monitor

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// fakeSweeps records what the monitor keeps with each event.
type fakeSweeps struct {
	mu  sync.Mutex
	evs []snmp.Event
	got []incident.Sweep
}

func (f *fakeSweeps) RecordSweep(_ context.Context, ev snmp.Event, s incident.Sweep) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evs, f.got = append(f.evs, ev), append(f.got, s)
	return nil
}

func (f *fakeSweeps) all() []incident.Sweep {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]incident.Sweep(nil), f.got...)
}

// A send failure that names no destination checks the device's
// destinations (one at a time per file server), opens an incident only
// for the one that fails, says on its timeline what the others found, and
// keeps the finding with the event; a second one within event_gap checks
// nothing again; a device whose destinations all pass says so.
func TestEventNamingNoDestination(t *testing.T) {
	sweeps := &fakeSweeps{}
	r := newRig(t, Config{EventGap: time.Minute, Jitter: time.Hour, MaxConcurrent: 3, Sweeps: sweeps,
		Rand: func(n int64) int64 { return n - 1 }}, // no first-round check in the test's time
		func(_ context.Context, t scanwarden.Target) smbcheck.Verdict {
			time.Sleep(5 * time.Millisecond)
			if t.Path == "walt" {
				return smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102", Summary: "password refused"}
			}
			return smbcheck.Verdict{Cause: scanwarden.CauseOK, Summary: "a test file was written"}
		},
		dest("accounts", "fs1", "MFP01"), dest("walt", "fs1", "MFP01"), dest("reception", "fs2", "MFP01"),
		dest("other", "fs3", "MFP02"), dest("other2", "fs3", "MFP02"))
	ctx := context.Background()
	ev := snmp.Event{Device: "MFP01", Code: "1103", Text: "Cannot send. Error 1103", Source: snmp.SourceConsole,
		Key: "panel:1", Time: time.Now(), Detail: map[string]string{snmp.DetailPrinterStatus: "idle", snmp.DetailPrinterErrors: ""}}
	r.m.Event(ctx, ev)
	waitFor(t, "the sweep's finding", func() bool { return len(sweeps.all()) == 1 })
	s := sweeps.all()[0]
	if len(s.Checked) != 3 {
		t.Fatalf("checked %+v, want the device's three destinations", s.Checked)
	}
	for _, c := range s.Checked {
		if !c.Fresh || c.At.IsZero() {
			t.Errorf("%s: %+v, want checked for this failure", c.Destination, c)
		}
	}
	if f := s.Failing(); len(f) != 1 || f[0].Destination != "walt" || f[0].Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("failing %+v, want walt", f)
	}
	if !strings.Contains(s.Text(), "only walt fails") || !strings.Contains(s.Text(), "reports: idle, no error") {
		t.Errorf("finding %q", s.Text())
	}
	if got := r.chk.calls.Load(); got != 3 || r.rep.count("other") != 0 {
		t.Errorf("%d checks (want 3), other checked %d times (want 0)", got, r.rep.count("other"))
	}
	r.chk.mu.Lock()
	if r.chk.maxServer != 1 {
		t.Errorf("%d checks at once on one file server, want 1", r.chk.maxServer)
	}
	r.chk.mu.Unlock()
	incs, err := r.incs.Incidents(ctx, store.IncidentFilter{State: incident.StateOpen})
	if err != nil {
		t.Fatal(err)
	}
	if len(incs) != 1 || incs[0].Destination != "walt" || incs[0].Cause != scanwarden.CauseBadCredentials || incs[0].AffectedJobs != 1 {
		t.Fatalf("open incidents %+v, want walt's alone with the failure counted", incs)
	}
	tl, err := r.incs.Timeline(ctx, incs[0].ID, 20)
	if err != nil {
		t.Fatal(err)
	}
	var said string
	for _, e := range tl {
		if e.Kind == incident.EntryDeviceEvent {
			said = e.Text
		}
	}
	for _, want := range []string{"Cannot send. Error 1103", "accounts: ok", "reception: ok", "walt: bad-credentials", "only walt fails"} {
		if !strings.Contains(said, want) {
			t.Errorf("timeline's device failure %q lacks %q", said, want)
		}
	}
	waitFor(t, "one notification", func() bool { return len(r.not.all()) == 1 })
	if n := r.not.all()[0]; n.ch != incident.Opened || n.inc.Destination != "walt" {
		t.Errorf("notified %+v", n)
	}

	// The same failure again within event_gap: nothing is checked again,
	// the finding stands on the last checks, the job is counted.
	ev.Key, ev.Time = "panel:2", time.Now()
	r.m.Event(ctx, ev)
	waitFor(t, "the second finding", func() bool { return len(sweeps.all()) == 2 })
	if got := r.chk.calls.Load(); got != 3 {
		t.Errorf("%d checks after a second failure within event_gap, want still 3", got)
	}
	for _, c := range sweeps.all()[1].Checked {
		if c.Fresh {
			t.Errorf("%s checked again within event_gap", c.Destination)
		}
	}
	incs, _ = r.incs.Incidents(ctx, store.IncidentFilter{State: incident.StateOpen})
	if len(incs) != 1 || incs[0].AffectedJobs != 2 {
		t.Errorf("open incidents %+v, want walt's with two failures", incs)
	}

	// A device whose destinations all pass: no incident, and the event
	// says so with the device's own status.
	r.m.Event(ctx, snmp.Event{Device: "MFP02", Code: "1103", Text: "Cannot send. Error 1103", Key: "panel:3", Source: snmp.SourceMail})
	waitFor(t, "the healthy device's finding", func() bool { return len(sweeps.all()) == 3 })
	s = sweeps.all()[2]
	if len(s.Checked) != 2 || len(s.Failing()) != 0 || !strings.Contains(s.Text(), incident.AllAcceptNow) ||
		!strings.Contains(s.Text(), "status was not in this report") {
		t.Errorf("healthy device: %+v %q", s.Checked, s.Text())
	}
	incs, _ = r.incs.Incidents(ctx, store.IncidentFilter{})
	if len(incs) != 1 {
		t.Errorf("incidents %+v, want only walt's", incs)
	}
}
