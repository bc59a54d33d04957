package smbcheck

// A check with no device profile states the server's lowest dialect
// beside what it already states (signing, encryption).

import (
	"context"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabLowestDialect(t *testing.T) {
	lab := testlab.Require(t)
	lowest := func(want string, asked int) func(t *testing.T, r Report) {
		return func(t *testing.T, r Report) {
			t.Helper()
			s := stepIs(t, r, StepNegotiate, StatusOK)
			if s.Evidence["lowest_dialect"] != want || s.Evidence["lowest_dialect_asked"] != asked || !strings.Contains(s.Detail, "the server's lowest dialect is "+want) {
				t.Errorf("negotiate %q, evidence %v; want lowest %s after %d questions", s.Detail, s.Evidence, want, asked)
			}
		}
	}
	for _, c := range []labCase{
		// smb3only takes nothing below 3.1.1: 2.0.2, 2.1, 3.0 and 3.0.2 asked.
		{name: "smb3only", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", want: scanwarden.CauseOK, check: lowest("3.1.1", 4)},
		{name: "ordinary", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", want: scanwarden.CauseOK, check: lowest("2.0.2", 1)},
		{name: "dc", dest: "//" + lab.DCHost + "/scans", user: "alice", want: scanwarden.CauseOK, check: lowest("2.0.2", 1)},
		// smb21max chooses 2.1; only 2.0.2 is below it.
		{name: "smb21max", dest: "//" + lab.SMB2IP + ":3445/scans", user: "scanuser", want: scanwarden.CauseOK, check: lowest("2.0.2", 1)},
		// A check with a profile replays the device and asks nothing more.
		{name: "with-profile", dest: "//" + lab.SMB2IP + ":1445/scans", user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB311}}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["lowest_dialect"] != nil || s.Evidence["lowest_dialect_asked"] != nil {
				t.Errorf("evidence %v", s.Evidence)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}

// TestLabLowestDialectRemembered: with Options.LowestDialects (serve's),
// the second check of the same server states the lowest dialect without a
// connection of its own; once the answer is older than the TTL, or after a
// check of that server whose negotiate failed, the next check asks again.
// Each check's progress shows every step in order, the negotiate step with
// its finding, though the question runs beside the later steps.
func TestLabLowestDialectRemembered(t *testing.T) {
	lab := testlab.Require(t)
	fc := startFrameCounter(t, net.JoinHostPort(lab.SMB2IP, "1445"))
	tg := scanwarden.Target{Host: "127.0.0.1", Port: fc.port(), Share: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	mem := NewLowestDialects(LowestDialectTTL)
	clock := time.Now()
	check := func(name string, d Device, want scanwarden.Cause, asked int) (conns int64, r Report) {
		t.Helper()
		fc.reset()
		var shown []Step
		o := Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, Device: d, LowestDialects: mem,
			Now: func() time.Time { return clock }, Progress: func(s Step) { shown = append(shown, s) }}
		r = Run(context.Background(), tg, o)
		conns, _ = fc.settled(t)
		if r.Verdict.Cause != want {
			t.Fatalf("%s: verdict %s, want %s%s", name, r.Verdict.Cause, want, stepsString(r))
		}
		if !reflect.DeepEqual(shown, r.Steps) {
			t.Errorf("%s: progress showed %s, the report has %s", name, stepsOf(shown), stepsOf(r.Steps))
		}
		if asked < 0 {
			return conns, r
		}
		s := r.Step(StepNegotiate)
		if s.Evidence["lowest_dialect"] != "3.1.1" || s.Evidence["lowest_dialect_asked"] != asked || !strings.Contains(s.Detail, "the server's lowest dialect is 3.1.1") {
			t.Errorf("%s: negotiate %q, evidence %v; want lowest 3.1.1 after %d questions", name, s.Detail, s.Evidence, asked)
		}
		return conns, r
	}
	c1, _ := check("first", Device{}, scanwarden.CauseOK, 4)
	c2, r := check("second", Device{}, scanwarden.CauseOK, 0)
	t.Logf("smb3only: first check %d connections, second %d", c1, c2)
	if c1-c2 != 4 {
		t.Errorf("the second check made %d connections, the first %d: want 4 fewer (no negotiate-only connection)", c2, c1)
	}
	if got, want := r.Step(StepNegotiate).Evidence["lowest_dialect_learned"], clock.UTC().Format(time.RFC3339); got != want {
		t.Errorf("lowest_dialect_learned %v, want %s", got, want)
	}
	clock = clock.Add(LowestDialectTTL)
	if c, _ := check("expired", Device{}, scanwarden.CauseOK, 4); c != c1 {
		t.Errorf("after the TTL: %d connections, want %d (asked again)", c, c1)
	}
	check("remembered again", Device{}, scanwarden.CauseOK, 0)
	// An SMB 2.1 MFP: smb3only refuses it at the negotiate.
	check("negotiate fails", Device{MaxDialect: DialectSMB21}, scanwarden.CauseDialectFloor, -1)
	if c, _ := check("after a failed negotiate", Device{}, scanwarden.CauseOK, 4); c != c1 {
		t.Errorf("after a failed negotiate: %d connections, want %d (asked again)", c, c1)
	}
}

// TestLabLowestDialectShared: checks of one server that start at once
// with nothing remembered (serve's Check all, a folder per user on one
// server) share one lowest-dialect question: the server sees one set of
// negotiate-only connections, not one per check. One check states that it
// asked; the others state the answer it learned.
func TestLabLowestDialectShared(t *testing.T) {
	lab := testlab.Require(t)
	fc := startFrameCounter(t, net.JoinHostPort(lab.SMB2IP, "1445"))
	tg := scanwarden.Target{Host: "127.0.0.1", Port: fc.port(), Share: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	mem := NewLowestDialects(LowestDialectTTL)
	clock := time.Now()
	opts := func(shown *[]Step) Options {
		return Options{MaxFailures: DefaultMaxFailures, StepTimeout: 10 * time.Second, LowestDialects: mem,
			Now: func() time.Time { return clock }, Progress: func(s Step) { *shown = append(*shown, s) }}
	}
	const checks = 4
	reports := make([]Report, checks)
	shown := make([][]Step, checks)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range checks {
		wg.Go(func() {
			<-start
			reports[i] = Run(context.Background(), tg, opts(&shown[i]))
		})
	}
	close(start)
	wg.Wait()
	together, _ := fc.settled(t)
	// What one check of this server costs with the answer remembered.
	fc.reset()
	var one []Step
	if r := Run(context.Background(), tg, opts(&one)); r.Verdict.Cause != scanwarden.CauseOK {
		t.Fatalf("remembered: verdict %s%s", r.Verdict.Cause, stepsString(r))
	}
	alone, _ := fc.settled(t)
	t.Logf("smb3only: %d checks at once made %d connections; one check with the answer remembered %d", checks, together, alone)
	// smb3only takes nothing below 3.1.1: one question is 4 connections.
	if want := checks*alone + 4; together != want {
		t.Errorf("%d checks at once made %d connections, want %d (%d each and one question of 4)", checks, together, want, alone)
	}
	asked := 0
	for i, r := range reports {
		if r.Verdict.Cause != scanwarden.CauseOK {
			t.Fatalf("check %d: verdict %s%s", i, r.Verdict.Cause, stepsString(r))
		}
		if !reflect.DeepEqual(shown[i], r.Steps) {
			t.Errorf("check %d: progress showed %s, the report has %s", i, stepsOf(shown[i]), stepsOf(r.Steps))
		}
		s := r.Step(StepNegotiate)
		if s.Evidence["lowest_dialect"] != "3.1.1" || !strings.Contains(s.Detail, "the server's lowest dialect is 3.1.1") {
			t.Errorf("check %d: negotiate %q, evidence %v", i, s.Detail, s.Evidence)
		}
		switch s.Evidence["lowest_dialect_asked"] {
		case 4:
			asked++
		case 0:
			if got, want := s.Evidence["lowest_dialect_learned"], clock.UTC().Format(time.RFC3339); got != want {
				t.Errorf("check %d: lowest_dialect_learned %v, want %s", i, got, want)
			}
		default:
			t.Errorf("check %d: lowest_dialect_asked %v", i, s.Evidence["lowest_dialect_asked"])
		}
	}
	if asked != 1 {
		t.Errorf("%d checks say they asked the lowest dialect, want 1", asked)
	}
}

// TestLabLowestDialectAskedAtOnce: a check with no memory shared with
// other checks (the CLI's) asks 2.0.2 alone as soon as its TCP connection
// stands, beside its own negotiate, not once its logon is under way — the
// question's connection is taken before the check's second request (its
// first SESSION_SETUP). serve's checks, which share one question, still
// ask once their server has chosen its highest dialect.
func TestLabLowestDialectAskedAtOnce(t *testing.T) {
	lab := testlab.Require(t)
	fc := startFrameCounter(t, net.JoinHostPort(lab.SMB2IP, "445"))
	tg := scanwarden.Target{Host: "127.0.0.1", Port: fc.port(), Share: "scans", User: "scanuser", Password: scanwarden.NewSecret(lab.Password)}
	check := func(mem *LowestDialects) []int64 {
		t.Helper()
		fc.reset()
		r := Run(context.Background(), tg, Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, LowestDialects: mem})
		if r.Verdict.Cause != scanwarden.CauseOK {
			t.Fatalf("verdict %s%s", r.Verdict.Cause, stepsString(r))
		}
		if s := r.Step(StepNegotiate); s.Evidence["lowest_dialect"] != "2.0.2" || s.Evidence["lowest_dialect_asked"] != 1 {
			t.Errorf("negotiate evidence %v, want 2.0.2 after one question", s.Evidence)
		}
		fc.settled(t)
		return fc.requestsBefore()
	}
	// the server's answers on the check's own connection are held 300 ms:
	// a question asked beside the negotiate reaches the server before the
	// check can send its SESSION_SETUP however loaded the box, and one
	// asked after the logon's first exchange (the old order) still after
	fc.holdFirst.Store(int64(300 * time.Millisecond))
	own := check(nil)
	fc.holdFirst.Store(0)
	t.Logf("no memory: requests passed on when each connection was taken: %v", own)
	if len(own) != 2 || own[1] >= 2 {
		t.Errorf("the question's connection came after %v requests (connections %v), want before the check's SESSION_SETUP (at most its NEGOTIATE)", own[1:], own)
	}
	shared := check(NewLowestDialects(LowestDialectTTL))
	t.Logf("a shared memory: %v", shared)
	if len(shared) != 2 || shared[1] < 2 {
		t.Errorf("with a shared memory the question's connection came after %v requests, want after the server chose its dialect", shared[1:])
	}
}

func stepsOf(steps []Step) string {
	var b strings.Builder
	for _, s := range steps {
		fmt.Fprintf(&b, "\n  %s %s: %s", s.ID, s.Status, s.Detail)
	}
	return b.String()
}
