package monitor

import (
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/incident"
)

// timetable says when each destination is due: its interval (with
// jitter) since its last scheduled check, and the moment its open
// incident may close (close-arming). It wakes the scheduling loop when a
// close is due.
type timetable struct {
	interval   time.Duration
	maxJitter  time.Duration
	closeAfter time.Duration
	rand       func(n int64) int64
	now        func() time.Time
	wake       chan struct{}

	mu      sync.Mutex
	nextDue map[string]time.Time
	closeAt map[string]time.Time // open incident's CloseDue: checked then
}

func newTimetable(cfg Config) *timetable {
	return &timetable{interval: cfg.Interval, maxJitter: cfg.Jitter, closeAfter: cfg.CloseAfter, rand: cfg.Rand, now: cfg.Now,
		wake: make(chan struct{}, 1), nextDue: map[string]time.Time{}, closeAt: map[string]time.Time{}}
}

// poke wakes the scheduling loop.
func (t *timetable) poke() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// jitterLocked is up to maxJitter, at random; mu is held.
func (t *timetable) jitterLocked() time.Duration {
	if t.maxJitter <= 0 {
		return 0
	}
	return time.Duration(t.rand(int64(t.maxJitter) + 1))
}

// relist follows a fresh destination list: one added or edited is due
// now (its interval runs from that check) and not close-armed; one no
// longer listed is forgotten.
func (t *timetable) relist(ch listed, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range ch.arrived {
		t.nextDue[k] = now
		delete(t.closeAt, k)
	}
	for k := range t.nextDue {
		if !ch.keys[k] {
			delete(t.nextDue, k)
			delete(t.closeAt, k)
		}
	}
	for k := range t.closeAt {
		if !ch.keys[k] {
			delete(t.closeAt, k)
		}
	}
}

// due is a check the timetable wants now.
type due struct {
	dest   Destination
	reason string
}

// dueNow returns the destinations of ds (by key) due at now, in order,
// and moves their next due time an interval on. A destination seen for
// the first time is due an interval after its last check, else soon, the
// first round spread over the jitter.
func (t *timetable) dueNow(ds []Destination, now time.Time) []due {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []due
	for _, d := range ds {
		k := key(d.Name)
		if at, ok := t.closeAt[k]; ok && !now.Before(at) {
			// The open incident's green span has reached close_after.
			delete(t.closeAt, k)
			t.nextDue[k] = now.Add(t.interval + t.jitterLocked())
			out = append(out, due{d, ReasonClose})
			continue
		}
		next, ok := t.nextDue[k]
		if !ok {
			next = now.Add(t.jitterLocked())
			if last := d.LastCheck; !last.IsZero() && last.Add(t.interval).After(now) {
				next = last.Add(t.interval + t.jitterLocked())
			}
			t.nextDue[k] = next
			continue
		}
		if now.Before(next) {
			continue
		}
		t.nextDue[k] = now.Add(t.interval + t.jitterLocked())
		out = append(out, due{d, ReasonSchedule})
	}
	return out
}

// restart makes the destinations' intervals run from a check now ("Check
// all now").
func (t *timetable) restart(ds []Destination, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range ds {
		t.nextDue[key(d.Name)] = now.Add(t.interval + t.jitterLocked())
	}
}

// armClose schedules a check of the destination at the moment its open
// incident may close (incident.CloseDue), so that it closes then rather
// than at the next scheduled check, up to an interval late; a failure that
// cleared the green span disarms it.
func (t *timetable) armClose(name string, inc *incident.Incident) {
	k, at := key(name), inc.CloseDue(t.closeAfter)
	t.mu.Lock()
	defer t.mu.Unlock()
	if at.IsZero() {
		delete(t.closeAt, k)
		return
	}
	if cur, ok := t.closeAt[k]; ok && cur.Equal(at) {
		return
	}
	t.closeAt[k] = at
	// Wake the loop then (it also looks every Tick).
	time.AfterFunc(max(0, at.Sub(t.now())), t.poke)
}

// disarm forgets the destination's close time.
func (t *timetable) disarm(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.closeAt, key(name))
}
