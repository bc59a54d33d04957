package incident

import (
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

const closeAfter = 3 * time.Hour

func check(c scanwarden.Cause) Input {
	return Input{Kind: KindCheck, Destination: "reception", Device: "MFP01", Verdict: smbcheck.Verdict{Cause: c, KyoceraCode: c.Info().KyoceraCode, Summary: c.Info().Summary, Fix: c.Info().Fix}}
}

func devFail(code string) Input {
	return Input{Kind: KindDeviceFailure, Destination: "reception", Device: "MFP01", Code: code, Text: "Send error. " + code}
}

func open(c scanwarden.Cause, opened time.Time) *Incident {
	return &Incident{ID: 7, Destination: "reception", Device: "MFP01", State: StateOpen, Cause: c, KyoceraCode: c.Info().KyoceraCode,
		OpenedAt: opened, LastFailure: opened}
}

func closed(at time.Time) *Incident {
	i := open(scanwarden.CauseBadCredentials, at.Add(-5*time.Hour))
	i.State, i.ClosedAt, i.LastFailure = StateClosed, at, at.Add(-4*time.Hour)
	return i
}

func withGreen(i *Incident, since time.Time) *Incident { i.GreenSince = since; return i }

func TestNext(t *testing.T) {
	tests := []struct {
		name       string
		cur        *Incident
		in         Input
		now        time.Time
		wantNil    bool
		change     Change
		state      State
		cause      scanwarden.Cause
		flaps      int
		jobs       int
		entryKinds []EntryKind
	}{
		{name: "green check, no incident: nothing", in: check(scanwarden.CauseOK), now: t0, wantNil: true},
		{name: "tick, no incident: nothing", in: Input{Kind: KindTick}, now: t0, wantNil: true},
		{name: "delivered, no incident: nothing", in: Input{Kind: KindDelivery, Delivered: true}, now: t0, wantNil: true},
		{name: "failing check opens", in: check(scanwarden.CauseBadCredentials), now: t0,
			change: Opened, state: StateOpen, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryOpened, EntryCheck}},
		{name: "device failure opens without a cause, one job", in: devFail("1102"), now: t0,
			change: Opened, state: StateOpen, cause: "", jobs: 1, entryKinds: []EntryKind{EntryOpened, EntryDeviceEvent}},
		{name: "same cause again: no change", cur: open(scanwarden.CauseBadCredentials, t0), in: check(scanwarden.CauseBadCredentials), now: t0.Add(time.Hour),
			change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryCheck}},
		{name: "cause change is an update", cur: open(scanwarden.CauseBadCredentials, t0), in: check(scanwarden.CauseAccountLocked), now: t0.Add(time.Hour),
			change: Updated, state: StateOpen, cause: scanwarden.CauseAccountLocked, entryKinds: []EntryKind{EntryCheck, EntryCauseChanged}},
		{name: "device failure on open incident counts a job", cur: open(scanwarden.CauseBadCredentials, t0), in: devFail("1102"), now: t0.Add(time.Minute),
			change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials, jobs: 1, entryKinds: []EntryKind{EntryDeviceEvent}},
		{name: "first green check does not close", cur: open(scanwarden.CauseBadCredentials, t0), in: check(scanwarden.CauseOK), now: t0.Add(10 * time.Hour),
			change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryCheck}},
		{name: "green for less than close_after: open", cur: withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour)), in: check(scanwarden.CauseOK),
			now: t0.Add(time.Hour + closeAfter - time.Second), change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryCheck}},
		{name: "green for close_after: closes", cur: withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour)), in: check(scanwarden.CauseOK),
			now: t0.Add(time.Hour + closeAfter), change: Closed, state: StateClosed, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryCheck, EntryClosed}},
		{name: "tick after close_after of green: closes", cur: withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour)), in: Input{Kind: KindTick},
			now: t0.Add(time.Hour + closeAfter), change: Closed, state: StateClosed, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryClosed}},
		{name: "tick without a green check: open", cur: open(scanwarden.CauseBadCredentials, t0), in: Input{Kind: KindTick},
			now: t0.Add(48 * time.Hour), change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials},
		{name: "device failure during green span: stays open", cur: withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour)), in: devFail("1102"),
			now: t0.Add(time.Hour + closeAfter), change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials, jobs: 1, entryKinds: []EntryKind{EntryDeviceEvent}},
		{name: "failing check during green span: stays open", cur: withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour)), in: check(scanwarden.CauseBadCredentials),
			now: t0.Add(time.Hour + closeAfter), change: Unchanged, state: StateOpen, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryCheck}},
		{name: "fails within 24 h of close: reopens, flap", cur: closed(t0), in: check(scanwarden.CauseAccountLocked), now: t0.Add(23 * time.Hour),
			change: Reopened, state: StateOpen, cause: scanwarden.CauseAccountLocked, flaps: 1, entryKinds: []EntryKind{EntryReopened, EntryCheck}},
		{name: "device failure within 24 h of close: reopens", cur: closed(t0), in: devFail("1102"), now: t0.Add(time.Hour),
			change: Reopened, state: StateOpen, cause: scanwarden.CauseBadCredentials, flaps: 1, jobs: 1, entryKinds: []EntryKind{EntryReopened, EntryDeviceEvent}},
		{name: "fails 24 h after close: a new incident", cur: closed(t0), in: check(scanwarden.CauseBadCredentials), now: t0.Add(ReopenWithin),
			change: Opened, state: StateOpen, cause: scanwarden.CauseBadCredentials, entryKinds: []EntryKind{EntryOpened, EntryCheck}},
		{name: "green check on a closed incident: nothing", cur: closed(t0), in: check(scanwarden.CauseOK), now: t0.Add(time.Hour), wantNil: true},
		{name: "failed delivery opens", in: Input{Kind: KindDelivery, Destination: "reception", Text: "folder refused"}, now: t0,
			change: Opened, state: StateOpen, entryKinds: []EntryKind{EntryOpened, EntryDelivery}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before Incident
			if tc.cur != nil {
				before = *tc.cur
			}
			r := Next(tc.cur, tc.in, tc.now, closeAfter)
			if tc.cur != nil && *tc.cur != before {
				t.Fatalf("Next modified its input: %+v", *tc.cur)
			}
			if tc.wantNil {
				if r.Incident != nil || r.Change != Unchanged || len(r.Entries) != 0 {
					t.Fatalf("want nothing, got %+v", r)
				}
				return
			}
			inc := r.Incident
			if inc == nil {
				t.Fatal("no incident")
			}
			if r.Change != tc.change || inc.State != tc.state || inc.Cause != tc.cause || inc.Flaps != tc.flaps || inc.AffectedJobs-baseJobs(tc.cur) != tc.jobs {
				t.Fatalf("got change %q state %q cause %q flaps %d jobs %d; want %q %q %q %d %d",
					r.Change, inc.State, inc.Cause, inc.Flaps, inc.AffectedJobs, tc.change, tc.state, tc.cause, tc.flaps, tc.jobs)
			}
			var kinds []EntryKind
			for _, e := range r.Entries {
				kinds = append(kinds, e.Kind)
			}
			if !equalKinds(kinds, tc.entryKinds) {
				t.Fatalf("entries %v, want %v", kinds, tc.entryKinds)
			}
			if inc.Destination != "reception" {
				t.Fatalf("destination %q", inc.Destination)
			}
			if tc.cur != nil && (r.Change == Reopened || r.Change == Unchanged || r.Change == Updated || r.Change == Closed) && inc.ID != tc.cur.ID {
				t.Fatalf("id changed: %d", inc.ID)
			}
			if r.Change == Opened && inc.ID != 0 {
				t.Fatalf("a new incident keeps the old id %d", inc.ID)
			}
			if inc.State == StateClosed && inc.ClosedAt != tc.now {
				t.Fatalf("closed_at %v", inc.ClosedAt)
			}
			if inc.State == StateOpen && !inc.ClosedAt.IsZero() {
				t.Fatalf("open with closed_at %v", inc.ClosedAt)
			}
		})
	}
}

func baseJobs(i *Incident) int {
	if i == nil || !i.Open() && i.ClosedAt.IsZero() {
		return 0
	}
	return i.AffectedJobs
}

func equalKinds(a, b []EntryKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The whole life of one incident, driven through Next as the monitor does.
func TestLifecycle(t *testing.T) {
	now := t0
	var cur *Incident
	step := func(in Input, d time.Duration, want Change) {
		t.Helper()
		now = now.Add(d)
		r := Next(cur, in, now, closeAfter)
		if r.Change != want {
			t.Fatalf("at +%v: change %q, want %q", now.Sub(t0), r.Change, want)
		}
		if r.Incident != nil {
			cur = r.Incident
		}
	}
	step(devFail("1102"), 0, Opened)
	step(check(scanwarden.CauseBadCredentials), time.Second, Unchanged) // the cause arrives with the triggered check: no update
	if cur.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("cause %q", cur.Cause)
	}
	step(check(scanwarden.CauseAccountLocked), 15*time.Minute, Updated)
	for i := 0; i < 12; i++ { // 3 h of green checks every 15 min
		step(check(scanwarden.CauseOK), 15*time.Minute, Unchanged)
	}
	step(check(scanwarden.CauseOK), 15*time.Minute, Closed)
	step(check(scanwarden.CauseOK), 15*time.Minute, Unchanged)
	step(devFail("1102"), 2*time.Hour, Reopened)
	if cur.Flaps != 1 || cur.AffectedJobs != 2 {
		t.Fatalf("flaps %d jobs %d", cur.Flaps, cur.AffectedJobs)
	}
}

func TestFold(t *testing.T) {
	r := Fold(nil, []Input{devFail("1102"), check(scanwarden.CauseBadCredentials)}, t0, closeAfter)
	if r.Incident == nil || r.Incident.Cause != scanwarden.CauseBadCredentials || len(r.Changes) != 1 || r.Changes[0] != Opened {
		t.Fatalf("got %+v", r)
	}
	if len(r.Entries) != 3 {
		t.Fatalf("entries %+v", r.Entries)
	}
	r = Fold(closed(t0.Add(-48*time.Hour)), []Input{check(scanwarden.CauseOK)}, t0, closeAfter)
	if r.Incident != nil || len(r.Changes) != 0 {
		t.Fatalf("green on an old closed incident: %+v", r)
	}
	r = Fold(open(scanwarden.CauseBadCredentials, t0), []Input{check(scanwarden.CauseAccountLocked), check(scanwarden.CauseBadCredentials)}, t0, closeAfter)
	if len(r.Changes) != 1 || r.Changes[0] != Updated || r.Incident.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("two updates: %+v", r)
	}
	if Opened.Event() != "incident.opened" || Reopened.Event() != "incident.opened" || Updated.Event() != "incident.updated" || Closed.Event() != "incident.closed" || Unchanged.Event() != "" {
		t.Fatal("event names")
	}
}

// CloseDue is when the rules would close the incident; a check at that
// moment closes it, one a moment earlier does not.
func TestCloseDue(t *testing.T) {
	green := withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour))
	lateFailure := withGreen(open(scanwarden.CauseBadCredentials, t0), t0.Add(time.Hour))
	lateFailure.LastFailure = t0.Add(2 * time.Hour) // (Next clears GreenSince on a failure; the later of the two counts)
	tests := []struct {
		name string
		cur  *Incident
		want time.Time
	}{
		{name: "no incident", cur: nil},
		{name: "open, no green check yet", cur: open(scanwarden.CauseBadCredentials, t0)},
		{name: "closed", cur: closed(t0)},
		{name: "open, green since 10:00", cur: green, want: t0.Add(time.Hour + closeAfter)},
		{name: "failure after the green start", cur: lateFailure, want: t0.Add(2*time.Hour + closeAfter)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.cur.CloseDue(closeAfter)
			if !got.Equal(tc.want) {
				t.Fatalf("CloseDue %v, want %v", got, tc.want)
			}
			if got.IsZero() {
				return
			}
			if r := Next(tc.cur, check(scanwarden.CauseOK), got.Add(-time.Nanosecond), closeAfter); r.Change == Closed {
				t.Fatal("closed before CloseDue")
			}
			if r := Next(tc.cur, check(scanwarden.CauseOK), got, closeAfter); r.Change != Closed {
				t.Fatalf("a green check at CloseDue did not close: %+v", r)
			}
		})
	}
	// After a green check, CloseDue is set; a device failure clears it.
	r := Next(open(scanwarden.CauseBadCredentials, t0), check(scanwarden.CauseOK), t0.Add(time.Minute), closeAfter)
	if due := r.Incident.CloseDue(closeAfter); !due.Equal(t0.Add(time.Minute + closeAfter)) {
		t.Fatalf("after a green check: due %v", due)
	}
	r = Next(r.Incident, devFail("1102"), t0.Add(2*time.Minute), closeAfter)
	if due := r.Incident.CloseDue(closeAfter); !due.IsZero() {
		t.Fatalf("after a device failure: due %v", due)
	}
}

// The file server's own story about a failing check goes on the timeline
// beside it, one entry a line; a passing check's does not; it never
// changes the cause.
func TestEvidenceOnTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ev := []string{"share limited: 2 of 2 connections in use", "Security 4625: scanuser failed to log on"}
	r := Next(nil, Input{Kind: KindCheck, At: t0, Destination: "d", ReportID: 7, Evidence: ev,
		Verdict: smbcheck.Verdict{Cause: scanwarden.CauseConnectionLimit}}, t0, time.Hour)
	var got []string
	for _, e := range r.Entries {
		if e.Kind == EntryServerLog {
			got = append(got, e.Text)
			if e.ReportID != 7 || !e.At.Equal(t0) {
				t.Errorf("entry %+v", e)
			}
		}
	}
	if len(got) != 2 || got[1] != ev[1] || r.Incident.Cause != scanwarden.CauseConnectionLimit {
		t.Fatalf("server-log entries %q, cause %s", got, r.Incident.Cause)
	}
	r = Next(r.Incident, Input{Kind: KindCheck, At: t0.Add(time.Minute), Evidence: ev, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}, t0.Add(time.Minute), time.Hour)
	for _, e := range r.Entries {
		if e.Kind == EntryServerLog {
			t.Errorf("a passing check's story on the timeline: %+v", e)
		}
	}
}
