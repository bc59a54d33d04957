package web

import (
	"context"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// A run is one check started from the page. It runs on the server's own
// context (not the request's: leaving the page does not cut a logon in
// half), its steps are kept so a stream that connects late replays them, and
// a second click on the same destination joins the running check instead
// of starting another.
type run struct {
	id, dest string

	mu       sync.Mutex
	steps    []smbcheck.Step
	report   *smbcheck.Report
	err      error
	done     bool
	finished time.Time
	changed  chan struct{} // closed and replaced on every change
}

// snapshot returns the steps from index i on, whether the run is over, and
// a channel closed at the next change.
func (r *run) snapshot(i int) ([]smbcheck.Step, bool, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var steps []smbcheck.Step
	if i < len(r.steps) {
		steps = append(steps, r.steps[i:]...)
	}
	return steps, r.done, r.changed
}

// wait returns the run's result once it is over, or ctx's error when ctx
// ends first (the request went away; the run goes on).
func (r *run) wait(ctx context.Context) (*smbcheck.Report, error) {
	for {
		_, done, changed := r.snapshot(0)
		if done {
			return r.result()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (r *run) result() (*smbcheck.Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.report, r.err
}

func (r *run) update(fn func()) {
	r.mu.Lock()
	fn()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// runs holds the checks started from the page. Finished runs are kept
// runKeep for a late stream, at most maxRuns in all.
type runs struct {
	mu     sync.Mutex
	byID   map[string]*run
	byDest map[string]*run // running ones
	now    func() time.Time
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// done is called when a run ends (the server drops its page cache).
	done func()
}

const (
	runKeep    = 10 * time.Minute
	maxRuns    = 200
	runTimeout = 5 * time.Minute
)

func newRuns(now func() time.Time) *runs {
	ctx, cancel := context.WithCancel(context.Background())
	return &runs{byID: map[string]*run{}, byDest: map[string]*run{}, now: now, ctx: ctx, cancel: cancel}
}

// checkFunc runs one check, streaming its steps to progress.
type checkFunc func(ctx context.Context, progress func(smbcheck.Step)) (smbcheck.Report, error)

// start begins a check of dest (Run check now), or returns the one already
// running.
func (rs *runs) start(dest string, c Checker) (*run, bool) {
	return rs.startFunc(dest, func(ctx context.Context, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		return c.Check(ctx, dest, progress)
	})
}

// startTry begins a check that stores nothing (Test before saving); it is
// never joined by another.
func (rs *runs) startTry(check checkFunc) *run {
	r, _ := rs.startFunc("try "+randomString(12), check)
	return r
}

// startFunc begins check under key, or returns the run already going under
// that key.
func (rs *runs) startFunc(dest string, check checkFunc) (*run, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.byDest[dest]; r != nil {
		return r, false
	}
	rs.prune()
	if len(rs.byID) >= maxRuns || rs.ctx.Err() != nil {
		return nil, false
	}
	r := &run{id: randomString(12), dest: dest, changed: make(chan struct{})}
	rs.byID[r.id] = r
	rs.byDest[dest] = r
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		ctx, cancel := context.WithTimeout(rs.ctx, runTimeout)
		defer cancel()
		rep, err := check(ctx, func(st smbcheck.Step) {
			r.update(func() { r.steps = append(r.steps, st) })
		})
		rs.mu.Lock()
		delete(rs.byDest, dest)
		rs.mu.Unlock()
		// The report is stored: drop the page cache before the stream says
		// "end", so that the page the script then fetches is fresh.
		if rs.done != nil {
			rs.done()
		}
		r.update(func() {
			if err != nil {
				r.err = err
			} else {
				r.report = &rep
				// A checker that reported no progress still shows its steps.
				if len(r.steps) == 0 {
					r.steps = rep.Steps
				}
			}
			r.done, r.finished = true, rs.now()
		})
	}()
	return r, true
}

func (rs *runs) get(id string) *run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.byID[id]
}

func (rs *runs) prune() {
	now := rs.now()
	for id, r := range rs.byID {
		r.mu.Lock()
		old := r.done && now.Sub(r.finished) > runKeep
		r.mu.Unlock()
		if old {
			delete(rs.byID, id)
		}
	}
}

func (rs *runs) close() {
	rs.cancel()
	rs.wg.Wait()
}
