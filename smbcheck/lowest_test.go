package smbcheck

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestLowestDialectsRemember(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	mem := NewLowestDialects(10 * time.Minute)
	mem.remember("10.0.0.1:445", lowestEntry{low: DialectSMB21, highest: DialectSMB311, at: at})
	for _, c := range []struct {
		name    string
		key     string
		highest Dialect
		now     time.Time
		since   time.Time
		ok      bool
	}{
		{"fresh", "10.0.0.1:445", DialectSMB311, at.Add(9 * time.Minute), time.Time{}, true},
		{"expired", "10.0.0.1:445", DialectSMB311, at.Add(10 * time.Minute), time.Time{}, false},
		{"clock went back", "10.0.0.1:445", DialectSMB311, at.Add(-time.Second), time.Time{}, false},
		{"another highest dialect", "10.0.0.1:445", DialectSMB302, at.Add(time.Minute), time.Time{}, false},
		{"another port", "10.0.0.1:139", DialectSMB311, at.Add(time.Minute), time.Time{}, false},
		{"learned when an admin asked", "10.0.0.1:445", DialectSMB311, at.Add(time.Minute), at, true},
		{"learned before an admin asked", "10.0.0.1:445", DialectSMB311, at.Add(time.Minute), at.Add(time.Second), false},
	} {
		e, ok := mem.lookup(c.key, c.highest, c.now, c.since)
		if ok != c.ok || ok && e.low != DialectSMB21 {
			t.Errorf("%s: %+v, %v; want found %v", c.name, e, ok, c.ok)
		}
	}
	// A new answer drops the expired ones.
	mem.remember("10.0.0.2:445", lowestEntry{low: DialectSMB202, highest: DialectSMB311, at: at.Add(20 * time.Minute)})
	if len(mem.m) != 1 {
		t.Errorf("entries %v, want only 10.0.0.2's", mem.m)
	}
	mem.forget("10.0.0.2:445", at.Add(20*time.Minute))
	if _, ok := mem.lookup("10.0.0.2:445", DialectSMB311, at.Add(21*time.Minute), time.Time{}); ok {
		t.Error("a forgotten answer is still found")
	}
	var none *LowestDialects
	none.remember("10.0.0.1:445", lowestEntry{low: DialectSMB21, highest: DialectSMB311, at: at})
	if _, ok := none.lookup("10.0.0.1:445", DialectSMB311, at, time.Time{}); ok {
		t.Error("nil remembers")
	}
	none.forget("10.0.0.1:445", at)
}

// TestLowestDialectsOutOfOrder: checks run at once and finish out of
// order. An answer stored late by a check that asked earlier neither
// replaces a later one for its server nor drops another server's later
// one; a failure forgets only what was learned no later than it asked.
func TestLowestDialectsOutOfOrder(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	mem := NewLowestDialects(10 * time.Minute)
	mem.remember("10.0.0.2:445", lowestEntry{low: DialectSMB202, highest: DialectSMB311, at: at.Add(time.Second)})
	mem.remember("10.0.0.1:445", lowestEntry{low: DialectSMB311, highest: DialectSMB311, at: at.Add(2 * time.Second)})
	mem.remember("10.0.0.1:445", lowestEntry{low: DialectSMB21, highest: DialectSMB311, at: at}) // asked first, done last
	if e, ok := mem.lookup("10.0.0.2:445", DialectSMB311, at.Add(time.Minute), time.Time{}); !ok || e.low != DialectSMB202 {
		t.Errorf("another server's later answer: %+v %v", e, ok)
	}
	if e, ok := mem.lookup("10.0.0.1:445", DialectSMB311, at.Add(time.Minute), time.Time{}); !ok || e.low != DialectSMB311 {
		t.Errorf("the later answer was replaced by an earlier one: %+v %v", e, ok)
	}
	mem.forget("10.0.0.1:445", at.Add(time.Second)) // a check that asked before the answer
	if _, ok := mem.lookup("10.0.0.1:445", DialectSMB311, at.Add(time.Minute), time.Time{}); !ok {
		t.Error("a failure forgot an answer learned after it asked")
	}
	mem.forget("10.0.0.1:445", at.Add(3*time.Second))
	if _, ok := mem.lookup("10.0.0.1:445", DialectSMB311, at.Add(time.Minute), time.Time{}); ok {
		t.Error("a failure after the answer did not forget it")
	}
}

// TestFloorHoldsProgress: while the lowest dialect is asked, the
// negotiate step and the steps after it wait to be shown, and are shown
// in order, the negotiate step with its finding, once it is known.
func TestFloorHoldsProgress(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      floorAsk
		detail string
		ev     Evidence
	}{
		{"learned", floorAsk{low: DialectSMB202, asked: 1}, "SMB 3.1.1; the server's lowest dialect is 2.0.2, signing required",
			Evidence{"lowest_dialect": "2.0.2", "lowest_dialect_asked": 1}},
		{"remembered", floorAsk{low: DialectSMB21, seen: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}, "SMB 3.1.1; the server's lowest dialect is 2.1, signing required",
			Evidence{"lowest_dialect": "2.1", "lowest_dialect_asked": 0, "lowest_dialect_learned": "2026-12-06T12:00:00Z"}},
		{"not learned", floorAsk{asked: 2, err: errors.New("2.1: i/o timeout")}, "SMB 3.1.1, signing required",
			Evidence{"lowest_dialect_asked": 2, "lowest_dialect_error": "2.1: i/o timeout"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var shown []Step
			r := &record{progress: func(s Step) { shown = append(shown, s) }}
			r.ok(r.begin(StepTCP), "connected")
			f := c.f
			f.done = make(chan struct{})
			r.endFloor(r.begin(StepNegotiate), StatusOK, "SMB 3.1.1", ", signing required", &f)
			r.ok(r.begin(StepSession), "logged on")
			if len(shown) != 1 {
				t.Fatalf("shown while asking: %s", stepsOf(shown))
			}
			close(f.done)
			r.ok(r.begin(StepTree), "connected to share scans")
			if len(shown) != 4 || shown[1].ID != StepNegotiate || shown[2].ID != StepSession || shown[3].ID != StepTree {
				t.Fatalf("shown: %s", stepsOf(shown))
			}
			if n := shown[1]; n.Detail != c.detail || !equalEvidence(n.Evidence, c.ev) {
				t.Errorf("negotiate %q %v; want %q %v", n.Detail, n.Evidence, c.detail, c.ev)
			}
			if r.r.Steps[1].Detail != c.detail {
				t.Errorf("report's negotiate %q", r.r.Steps[1].Detail)
			}
		})
	}
}

func equalEvidence(a, b Evidence) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestLowestDialectsShareQuestion: checks of one server that start while
// another check of it is asking its lowest dialect wait for that answer
// instead of asking again (one question for all of them); a question that
// fails is not shared — the checks that waited ask again, once, together;
// a question asked before an admin's check asked (since) is not waited
// for; a nil *LowestDialects asks for each check.
func TestLowestDialectsShareQuestion(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	const key, checks = "10.0.0.1:445", 5
	type result struct {
		low   Dialect
		asked int
		seen  time.Time
		err   error
	}
	// run starts checks answers at once; each question asked waits for
	// release, then answers with the next of answers.
	run := func(mem *LowestDialects, since time.Time, answers ...error) (results []result, questions int) {
		t.Helper()
		var mu sync.Mutex
		started := make(chan struct{}, checks)
		release := make(chan struct{})
		ask := func(context.Context) (Dialect, int, error) {
			mu.Lock()
			err := answers[min(questions, len(answers)-1)]
			questions++
			mu.Unlock()
			started <- struct{}{}
			<-release
			if err != nil {
				return 0, 1, err
			}
			return DialectSMB21, 2, nil
		}
		results = make([]result, checks)
		var wg sync.WaitGroup
		for i := range checks {
			wg.Go(func() {
				r := &results[i]
				r.low, r.asked, r.seen, r.err = mem.answer(context.Background(), key, DialectSMB311, at, since, ask)
			})
		}
		<-started
		// Every check finds the question before it is answered.
		waitAsking(t, mem, key, checks)
		close(release)
		wg.Wait()
		return results, questions
	}

	mem := NewLowestDialects(10 * time.Minute)
	results, questions := run(mem, time.Time{}, nil)
	if questions != 1 {
		t.Errorf("%d checks started together asked %d questions, want 1", checks, questions)
	}
	askedBy := 0
	for i, r := range results {
		switch {
		case r.err != nil || r.low != DialectSMB21:
			t.Errorf("check %d: %+v", i, r)
		case r.asked == 2 && r.seen.IsZero():
			askedBy++
		case r.asked != 0 || !r.seen.Equal(at):
			t.Errorf("check %d waited for the answer: asked %d, learned %v; want 0, %v", i, r.asked, r.seen, at)
		}
	}
	if askedBy != 1 {
		t.Errorf("%d checks say they asked, want 1", askedBy)
	}
	if _, ok := mem.lookup(key, DialectSMB311, at, time.Time{}); !ok {
		t.Error("the shared answer is not remembered")
	}
	if len(mem.asking) != 0 {
		t.Errorf("questions left in flight: %v", mem.asking)
	}

	// The first question fails: the others ask again, sharing one question.
	mem = NewLowestDialects(10 * time.Minute)
	results, questions = run(mem, time.Time{}, errors.New("2.0.2: connection reset"), nil)
	if questions != 2 {
		t.Errorf("after a failed question: %d questions, want 2", questions)
	}
	failed := 0
	for _, r := range results {
		if r.err != nil {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d checks report the failure, want only the one that asked: %+v", failed, results)
	}

	// A nil memory shares nothing.
	if _, questions = runAlone(t, checks); questions != checks {
		t.Errorf("without a memory: %d questions for %d checks", questions, checks)
	}

	// An admin's check does not wait for a question asked before it asked.
	mem = NewLowestDialects(10 * time.Minute)
	older := &lowestFlight{highest: DialectSMB311, at: at, done: make(chan struct{})}
	mem.asking[key] = older
	_, f, lead := mem.join(key, DialectSMB311, at.Add(time.Second), at.Add(time.Second))
	if !lead || f == older {
		t.Error("a check asked after the question in flight waits for it")
	}
	if _, f, lead := mem.join(key, DialectSMB311, at.Add(2*time.Second), at.Add(time.Second)); lead || f == older {
		t.Error("a later admin's check does not wait for the fresh question")
	}
	if _, _, lead := mem.join(key, DialectSMB302, at.Add(2*time.Second), time.Time{}); !lead {
		t.Error("a check whose server chose another highest dialect waits for the question")
	}
}

// waitAsking waits until one check asks mem's question about key and
// the n-1 others wait for it (5 s at most).
func waitAsking(t *testing.T, mem *LowestDialects, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mem.mu.Lock()
		f := mem.asking[key]
		waiting := f != nil && f.waiters == n-1
		mem.mu.Unlock()
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %d checks did not all find the question within 5 s", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// runAlone asks n questions at once with no memory and counts them.
func runAlone(t *testing.T, n int) ([]Dialect, int) {
	t.Helper()
	var mu sync.Mutex
	questions := 0
	var none *LowestDialects
	out := make([]Dialect, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out[i], _, _, _ = none.answer(context.Background(), "10.0.0.1:445", DialectSMB311, time.Now(), time.Time{}, func(context.Context) (Dialect, int, error) {
				mu.Lock()
				questions++
				mu.Unlock()
				return DialectSMB21, 2, nil
			})
		})
	}
	wg.Wait()
	return out, questions
}
