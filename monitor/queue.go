package monitor

import (
	"sync"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// job is one check waiting or running, with everything that joined it
// while it waited.
type job struct {
	dest     Destination
	reason   string
	inputs   []incident.Input // device failures to fold in before the check's result
	waiters  []chan Result
	progress []func(smbcheck.Step)
	sweeps   []sweepSlot // device failures naming no destination that wait for this check
}

// queue holds the checks waiting and starts them in order while the caps
// allow: at most max at once, one at a time per file server. A check
// waiting for a destination is joined, never doubled. Its lock is taken
// before any other part's (offer's fn may read theirs), never after.
type queue struct {
	max int
	run func(*job) // runs a started job

	mu      sync.Mutex
	pending []*job
	byDest  map[string]*job
	busy    map[string]bool // server → a check runs
	running int
	closing bool
	wg      sync.WaitGroup // running checks
}

func newQueue(max int, run func(*job)) *queue {
	return &queue{max: max, run: run, byDest: map[string]*job{}, busy: map[string]bool{}}
}

// offer calls fn, in order, with each key and the job already waiting for
// it (nil when none); a job fn returns is queued. Only then do the jobs
// start, as the caps allow: no job offered here runs before fn has seen
// every key. It returns false, calling nothing, once the queue is closed.
func (q *queue) offer(keys []string, fn func(i int, waiting *job) *job) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closing {
		return false
	}
	for i, k := range keys {
		if j := fn(i, q.byDest[k]); j != nil && q.byDest[k] != j {
			q.pending = append(q.pending, j)
			q.byDest[k] = j
		}
	}
	q.dispatchLocked()
	return true
}

// dispatchLocked starts pending jobs, in order, while the caps allow.
func (q *queue) dispatchLocked() {
	if q.closing {
		return
	}
	kept := q.pending[:0]
	for _, j := range q.pending {
		srv := j.dest.server()
		if q.running >= q.max || q.busy[srv] {
			kept = append(kept, j)
			continue
		}
		delete(q.byDest, key(j.dest.Name))
		q.busy[srv] = true
		q.running++
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.run(j)
			q.finished(j)
		}()
	}
	for i := len(kept); i < len(q.pending); i++ {
		q.pending[i] = nil
	}
	q.pending = kept
}

// finished frees j's slot and starts what waited for it.
func (q *queue) finished(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running--
	delete(q.busy, j.dest.server())
	q.dispatchLocked()
}

// close refuses new jobs and returns the ones still waiting (never to
// run); running ones finish (wait).
func (q *queue) close() []*job {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closing = true
	pending := q.pending
	q.pending, q.byDest = nil, map[string]*job{}
	return pending
}

func (q *queue) closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closing
}

// counts are the jobs waiting and running.
func (q *queue) counts() (pending, running int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending), q.running
}

// wait returns once every started job has returned.
func (q *queue) wait() { q.wg.Wait() }
