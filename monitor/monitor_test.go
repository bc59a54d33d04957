package monitor

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// The store's incidents are what serve hands the monitor.
var (
	_ Incidents = (*store.Incidents)(nil)
	_ Groups    = (*store.Incidents)(nil)
)

// fakeRegistry is a fixed list; Match names by the event's destination
// text, else all of the device's.
type fakeRegistry struct {
	mu    sync.Mutex
	dests []Destination
}

func (r *fakeRegistry) Destinations(context.Context) ([]Destination, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Destination(nil), r.dests...), nil
}

func (r *fakeRegistry) Match(_ context.Context, ev snmp.Event) ([]Destination, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Destination
	for _, d := range r.dests {
		if ev.Destination != "" && strings.EqualFold(ev.Destination, `\\`+d.Target.Host+`\`+d.Target.Share) ||
			ev.Destination == "" && d.Device == ev.Device {
			out = append(out, d)
		}
	}
	return out, nil
}

// fakeChecker is a struct of function fields; it counts concurrency per server.
type fakeChecker struct {
	mu        sync.Mutex
	perServer map[string]int
	maxServer int
	running   int
	maxAll    int
	calls     atomic.Int64
	fn        func(ctx context.Context, t scanwarden.Target) smbcheck.Verdict
	asked     []time.Time // each check's Destination.AskedAt, in order
}

func (c *fakeChecker) Check(ctx context.Context, d Destination, progress func(smbcheck.Step)) smbcheck.Report {
	t := d.Target
	c.calls.Add(1)
	c.mu.Lock()
	if c.perServer == nil {
		c.perServer = map[string]int{}
	}
	c.perServer[t.Host]++
	c.asked = append(c.asked, d.AskedAt)
	c.running++
	c.maxServer = max(c.maxServer, c.perServer[t.Host])
	c.maxAll = max(c.maxAll, c.running)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.perServer[t.Host]--
		c.running--
		c.mu.Unlock()
	}()
	v := smbcheck.Verdict{Cause: scanwarden.CauseOK}
	if c.fn != nil {
		v = c.fn(ctx, t)
	}
	if progress != nil {
		progress(smbcheck.Step{ID: smbcheck.StepSession, Status: smbcheck.StatusOK})
	}
	return smbcheck.Report{Target: t.Info(), Verdict: v}
}

type fakeReports struct {
	mu   sync.Mutex
	reps map[string][]smbcheck.Report
}

func (r *fakeReports) AddReport(_ context.Context, dest string, rep smbcheck.Report) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reps == nil {
		r.reps = map[string][]smbcheck.Report{}
	}
	r.reps[dest] = append(r.reps[dest], rep)
	return int64(len(r.reps[dest])), nil
}

func (r *fakeReports) count(dest string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reps[dest])
}

type sent struct {
	ch  incident.Change
	inc incident.Incident
}

type fakeNotifier struct {
	mu   sync.Mutex
	sent []sent
}

func (n *fakeNotifier) Notify(_ context.Context, ch incident.Change, inc incident.Incident) {
	n.mu.Lock()
	n.sent = append(n.sent, sent{ch, inc})
	n.mu.Unlock()
}

func (n *fakeNotifier) all() []sent {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]sent(nil), n.sent...)
}

func dest(name, host, device string) Destination {
	return Destination{Name: name, Device: device, Target: scanwarden.Target{Host: host, Share: "scans", Path: name, User: "scan"}}
}

type rig struct {
	m    *Monitor
	reg  *fakeRegistry
	chk  *fakeChecker
	rep  *fakeReports
	incs *store.Incidents
	not  *fakeNotifier
}

func newRig(t *testing.T, cfg Config, fn func(context.Context, scanwarden.Target) smbcheck.Verdict, dests ...Destination) *rig {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &rig{reg: &fakeRegistry{dests: dests}, chk: &fakeChecker{fn: fn}, rep: &fakeReports{}, incs: st.Incidents(), not: &fakeNotifier{}}
	if cfg.Interval == 0 {
		cfg.Interval = time.Hour
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 4
	}
	if cfg.CloseAfter == 0 {
		cfg.CloseAfter = time.Hour
	}
	cfg.Tick = 5 * time.Millisecond
	r.m, err = New(cfg, r.reg, r.chk, r.rep, r.incs, r.not)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.m.Close() })
	return r
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Every destination is checked on schedule; never two at once on one file
// server; never more than MaxConcurrent in all.
func TestScheduleAndCaps(t *testing.T) {
	var dests []Destination
	for i, host := range []string{"fs1", "fs1", "fs1", "fs2", "fs2", "fs3", "fs4", "fs5", "fs6"} {
		dests = append(dests, dest(string(rune('a'+i)), host, "MFP01"))
	}
	r := newRig(t, Config{Interval: 50 * time.Millisecond, MaxConcurrent: 3}, func(ctx context.Context, _ scanwarden.Target) smbcheck.Verdict {
		time.Sleep(5 * time.Millisecond)
		return smbcheck.Verdict{Cause: scanwarden.CauseOK}
	}, dests...)
	waitFor(t, "two rounds", func() bool {
		if r.m.Stats().Checks < int64(2*len(dests)) {
			return false
		}
		for _, d := range dests {
			if r.rep.count(d.Name) < 2 {
				return false
			}
		}
		return true
	})
	r.chk.mu.Lock()
	defer r.chk.mu.Unlock()
	if r.chk.maxServer != 1 || r.chk.maxAll > 3 || r.chk.maxAll < 2 {
		t.Fatalf("per server %d (want 1), all %d (want 2..3)", r.chk.maxServer, r.chk.maxAll)
	}
	if s := r.m.Stats(); s.Destinations != len(dests) || s.Checks < int64(2*len(dests)) {
		t.Fatalf("stats %+v", s)
	}
}

// A device failure checks the destination it names at once; the incident
// opens with the check's cause and one notification goes out.
func TestEventOpensIncident(t *testing.T) {
	acct := dest("accounts", "fs1", "MFP01")
	acct.Target.Share = "acct"
	r := newRig(t, Config{EventGap: time.Hour, Jitter: time.Hour}, func(_ context.Context, t scanwarden.Target) smbcheck.Verdict {
		if t.Path == "reception" {
			return smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102", Summary: "refused", Fix: "re-enter"}
		}
		return smbcheck.Verdict{Cause: scanwarden.CauseOK}
	}, dest("reception", "fs1", "MFP01"), acct, dest("other", "fs2", "MFP02"))
	ev := snmp.Event{Device: "MFP01", Code: "1102", Text: "Send error. 1102", Destination: `\\FS1\scans`, Source: snmp.SourceJob, Time: time.Now()}
	r.m.Event(context.Background(), ev)
	waitFor(t, "notification", func() bool { return len(r.not.all()) == 1 })
	n := r.not.all()[0]
	if n.ch != incident.Opened || n.inc.Cause != scanwarden.CauseBadCredentials || n.inc.AffectedJobs != 1 || n.inc.Destination != "reception" {
		t.Fatalf("notified %+v", n)
	}
	// A burst of the same failure within the gap: no new check, jobs counted.
	for i := 0; i < 10; i++ {
		r.m.Event(context.Background(), ev)
	}
	incs, _ := r.incs.Incidents(context.Background(), store.IncidentFilter{State: incident.StateOpen})
	if len(incs) != 1 || incs[0].AffectedJobs != 11 {
		t.Fatalf("incidents %+v stats %+v", incs, r.m.Stats())
	}
	if got := r.rep.count("reception"); got != 1 {
		t.Fatalf("%d checks of reception, want 1", got)
	}
	if r.rep.count("accounts") != 0 || r.rep.count("other") != 0 {
		t.Fatal("a destination the event does not name was checked")
	}
	if len(r.not.all()) != 1 {
		t.Fatalf("notifications %+v", r.not.all())
	}
	// An event naming no destination: all of that device's.
	r.m.Event(context.Background(), snmp.Event{Device: "MFP02", Code: "1102", Time: time.Now()})
	waitFor(t, "check of other", func() bool { return r.rep.count("other") == 1 })
	// An event of an unknown device: counted, nothing checked.
	r.m.Event(context.Background(), snmp.Event{Device: "MFP99", Code: "1102"})
	if s := r.m.Stats(); s.Unmatched != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// CheckNow streams steps and returns the stored report; the incident
// closes after close_after of green checks.
func TestCheckNowAndClose(t *testing.T) {
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	verdict := scanwarden.CauseBadCredentials
	r := newRig(t, Config{CloseAfter: time.Hour, Now: clock, Jitter: time.Hour}, func(context.Context, scanwarden.Target) smbcheck.Verdict {
		mu.Lock()
		defer mu.Unlock()
		return smbcheck.Verdict{Cause: verdict}
	}, dest("reception", "fs1", "MFP01"))
	var steps int
	res, err := r.m.CheckNow(context.Background(), "Reception", func(smbcheck.Step) { steps++ })
	if err != nil || res.Report.Verdict.Cause != scanwarden.CauseBadCredentials || steps != 1 || res.Incident == nil || !res.Incident.Open() {
		t.Fatalf("check now: %+v %v steps %d", res, err, steps)
	}
	mu.Lock()
	verdict = scanwarden.CauseOK
	mu.Unlock()
	for _, d := range []time.Duration{time.Minute, 30 * time.Minute, 30 * time.Minute} {
		advance(d)
		if res, err = r.m.CheckNow(context.Background(), "reception", nil); err != nil {
			t.Fatal(err)
		}
	}
	// (a scheduled check may have come first and closed it: ask the store)
	incs, _ := r.incs.Incidents(context.Background(), store.IncidentFilter{})
	if len(incs) != 1 || incs[0].State != incident.StateClosed {
		t.Fatalf("not closed after an hour of green: %+v", incs)
	}
	waitFor(t, "closed notification", func() bool { return len(r.not.all()) == 2 })
	if r.not.all()[1].ch != incident.Closed {
		t.Fatalf("%+v", r.not.all())
	}
	if _, err := r.m.CheckNow(context.Background(), "nope", nil); !errors.Is(err, ErrUnknownDestination) {
		t.Fatalf("unknown: %v", err)
	}
}

// Shutdown lets a running check finish within the drain time, cancels it
// after that, and an interrupted check is not taken as a finding.
func TestShutdownDuringCheck(t *testing.T) {
	started := make(chan struct{})
	r := newRig(t, Config{Jitter: time.Hour}, func(ctx context.Context, _ scanwarden.Target) smbcheck.Verdict {
		close(started)
		<-ctx.Done()
		return smbcheck.Verdict{Cause: scanwarden.CauseTimeout}
	}, dest("reception", "fs1", "MFP01"))
	errc := make(chan error, 1)
	go func() {
		_, err := r.m.CheckNow(context.Background(), "reception", nil)
		errc <- err
	}()
	<-started
	t0 := time.Now()
	r.m.Shutdown(100 * time.Millisecond)
	if d := time.Since(t0); d < 100*time.Millisecond || d > 2*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "stopping") {
		t.Fatalf("check now: %v", err)
	}
	if r.rep.count("reception") != 0 {
		t.Fatal("an interrupted check was stored as a finding")
	}
	incs, _ := r.incs.Incidents(context.Background(), store.IncidentFilter{})
	if len(incs) != 0 {
		t.Fatalf("incident from an interrupted check: %+v", incs)
	}
}

// After a restart a destination checked recently waits out its interval;
// one checked long ago (or never) is checked soon.
func TestFirstRoundAfterRestart(t *testing.T) {
	recent := dest("recent", "fs1", "MFP01")
	recent.LastCheck = time.Now().Add(-10 * time.Minute)
	old := dest("old", "fs2", "MFP01")
	old.LastCheck = time.Now().Add(-2 * time.Hour)
	r := newRig(t, Config{Interval: time.Hour}, nil, recent, old, dest("never", "fs3", "MFP01"))
	waitFor(t, "old and never checked", func() bool { return r.rep.count("old") == 1 && r.rep.count("never") == 1 })
	// The first round settled: nothing queued or running, every destination
	// (recent in ~50 min) due more than 10 min away — had recent been made
	// due at start, it would be checked by then or still be due.
	settledBeyond(t, r.m, 10*time.Minute)
	if r.rep.count("recent") != 0 {
		t.Fatal("a destination checked 10 minutes ago was checked again at start")
	}
}

func TestDelivery(t *testing.T) {
	r := newRig(t, Config{Jitter: time.Hour}, func(context.Context, scanwarden.Target) smbcheck.Verdict {
		return smbcheck.Verdict{Cause: scanwarden.CauseNoWritePermission}
	}, dest("reception", "fs1", "MFP01"))
	r.m.Delivery(context.Background(), "reception", true, "scan.pdf") // healthy, nothing open: nothing
	if incs, _ := r.incs.Incidents(context.Background(), store.IncidentFilter{}); len(incs) != 0 {
		t.Fatalf("a delivery to a healthy destination made an incident: %+v", incs)
	}
	if _, err := r.m.CheckNow(context.Background(), "reception", nil); err != nil {
		t.Fatal(err)
	}
	r.m.Delivery(context.Background(), "reception", false, "doc1.pdf: access denied")
	incs, _ := r.incs.Incidents(context.Background(), store.IncidentFilter{})
	if len(incs) != 1 {
		t.Fatalf("incidents %+v", incs)
	}
	tl, _ := r.incs.Timeline(context.Background(), incs[0].ID, 0)
	if last := tl[len(tl)-1]; last.Kind != incident.EntryDelivery || !strings.Contains(last.Text, "doc1.pdf") {
		t.Fatalf("timeline %+v", tl)
	}
}

// blockingNotifier waits until its context ends (a webhook retrying).
type blockingNotifier struct{ started chan struct{} }

func (b blockingNotifier) Notify(ctx context.Context, _ incident.Change, _ incident.Incident) {
	close(b.started)
	<-ctx.Done()
}

// A notification still retrying at shutdown does not hold the stop past
// the drain time.
func TestShutdownCancelsSlowNotification(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	bn := blockingNotifier{started: make(chan struct{})}
	chk := &fakeChecker{fn: func(context.Context, scanwarden.Target) smbcheck.Verdict {
		return smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials}
	}}
	m, err := New(Config{Interval: time.Hour, Jitter: time.Hour, MaxConcurrent: 1, Tick: 5 * time.Millisecond},
		&fakeRegistry{dests: []Destination{dest("reception", "fs1", "MFP01")}}, chk, &fakeReports{}, st.Incidents(), bn)
	if err != nil {
		t.Fatal(err)
	}
	m.Open(context.Background())
	if _, err := m.CheckNow(context.Background(), "reception", nil); err != nil {
		t.Fatal(err)
	}
	<-bn.started
	t0 := time.Now()
	m.Shutdown(300 * time.Millisecond)
	if d := time.Since(t0); d < 250*time.Millisecond || d > 3*time.Second {
		t.Fatalf("shutdown took %v (want about the drain time)", d)
	}
}

// An open incident closes when close_after of green has elapsed — a check
// of the destination is run at that moment — not at the next scheduled
// check (an hour here). A device failure during the green span moves the
// close to close_after after it.
func TestCloseOnTime(t *testing.T) {
	const closeAfter = 400 * time.Millisecond
	var mu sync.Mutex
	verdict := scanwarden.CauseBadCredentials
	var reasons []string
	r := newRig(t, Config{CloseAfter: closeAfter, Jitter: time.Hour, EventGap: time.Hour,
		Rand: func(n int64) int64 { return n - 1 }, // first scheduled check an hour away
		OnCheck: func(_ Destination, _ smbcheck.Report, _ time.Duration, reason string) {
			mu.Lock()
			reasons = append(reasons, reason)
			mu.Unlock()
		}}, func(context.Context, scanwarden.Target) smbcheck.Verdict {
		mu.Lock()
		defer mu.Unlock()
		return smbcheck.Verdict{Cause: verdict}
	}, dest("reception", "fs1", "MFP01"))
	if res, err := r.m.CheckNow(context.Background(), "reception", nil); err != nil || !res.Incident.Open() {
		t.Fatalf("check now: %+v %v", res, err)
	}
	mu.Lock()
	verdict = scanwarden.CauseOK
	mu.Unlock()
	res, err := r.m.CheckNow(context.Background(), "reception", nil)
	if err != nil || !res.Incident.Open() || res.Incident.GreenSince.IsZero() {
		t.Fatalf("green check: %+v %v", res, err)
	}
	// A device failure 150 ms into the green span: checked (green), but the
	// span starts again.
	time.Sleep(150 * time.Millisecond)
	failedAt := time.Now()
	r.m.Event(context.Background(), snmp.Event{Device: "MFP01", Code: "1102", Destination: `\\fs1\scans`, Time: failedAt})
	waitFor(t, "closed notification", func() bool { return len(r.not.all()) == 2 })
	closedAt := time.Now()
	n := r.not.all()[1]
	if n.ch != incident.Closed {
		t.Fatalf("%+v", r.not.all())
	}
	if n.inc.ClosedAt.Sub(failedAt) < closeAfter {
		t.Fatalf("closed %v after the device failure, before close_after %v", n.inc.ClosedAt.Sub(failedAt), closeAfter)
	}
	if late := closedAt.Sub(failedAt) - closeAfter; late > 300*time.Millisecond {
		t.Fatalf("closed %v late", late)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{ReasonManual, ReasonManual, ReasonEvent, ReasonClose}
	if strings.Join(reasons, ",") != strings.Join(want, ",") {
		t.Fatalf("checks %v, want %v", reasons, want)
	}
	incs, _ := r.incs.Incidents(context.Background(), store.IncidentFilter{})
	if len(incs) != 1 || incs[0].State != incident.StateClosed {
		t.Fatalf("incidents %+v", incs)
	}
}
