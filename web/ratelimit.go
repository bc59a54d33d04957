package web

import (
	"sync"
	"time"
)

// limiter counts failed logins per client address in fixed windows: after
// max failures the address is refused until its window ends. The table is
// bounded: when full, ended windows are dropped, and if none has ended the
// new address is refused (a flood of addresses cannot grow it).
type limiter struct {
	mu     sync.Mutex
	max    int
	window time.Duration
	now    func() time.Time
	seen   map[string]*window
}

type window struct {
	start    time.Time
	failures int
}

const limiterCap = 10000

func newLimiter(max int, w time.Duration, now func() time.Time) *limiter {
	return &limiter{max: max, window: w, now: now, seen: map[string]*window{}}
}

// allow reports whether addr may try a login now, and if not, when it may.
func (l *limiter) allow(addr string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := l.seen[addr]
	if w == nil {
		if len(l.seen) >= limiterCap && !l.prune(now) {
			return false, l.window
		}
		return true, 0
	}
	if now.Sub(w.start) >= l.window {
		delete(l.seen, addr)
		return true, 0
	}
	if w.failures >= l.max {
		return false, w.start.Add(l.window).Sub(now)
	}
	return true, 0
}

// fail counts one failed login from addr.
func (l *limiter) fail(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := l.seen[addr]
	if w == nil || now.Sub(w.start) >= l.window {
		if w == nil && len(l.seen) >= limiterCap && !l.prune(now) {
			return
		}
		w = &window{start: now}
		l.seen[addr] = w
	}
	w.failures++
}

// succeed forgets addr's failures.
func (l *limiter) succeed(addr string) {
	l.mu.Lock()
	delete(l.seen, addr)
	l.mu.Unlock()
}

func (l *limiter) prune(now time.Time) bool {
	n := len(l.seen)
	for k, w := range l.seen {
		if now.Sub(w.start) >= l.window {
			delete(l.seen, k)
		}
	}
	return len(l.seen) < n
}
