// Package loglimit keeps what a LAN peer can provoke from flooding the log:
// at most one line per kind every period; the next line of that kind says
// how many were left out meanwhile. The SNMP trap and mail listeners and
// the web listener log refused and malformed input through it.
package loglimit

import (
	"log/slog"
	"sync"
	"time"
)

// Limiter logs at most one WARN line per kind every period.
type Limiter struct {
	log   *slog.Logger
	every time.Duration
	// Now is the clock (tests set it).
	Now func() time.Time

	mu    sync.Mutex
	kinds map[string]*kind
}

type kind struct {
	last    time.Time
	skipped int64
}

// New returns a Limiter writing to log.
func New(log *slog.Logger, every time.Duration) *Limiter {
	return &Limiter{log: log, every: every, Now: time.Now, kinds: map[string]*kind{}}
}

// Warn logs msg with args at WARN unless a line of kind k was logged less
// than a period ago; then it only counts.
func (l *Limiter) Warn(k, msg string, args ...any) {
	now := l.Now()
	l.mu.Lock()
	kd := l.kinds[k]
	if kd == nil {
		kd = &kind{}
		l.kinds[k] = kd
	}
	if !kd.last.IsZero() && now.Sub(kd.last) < l.every {
		kd.skipped++
		l.mu.Unlock()
		return
	}
	skipped := kd.skipped
	kd.last, kd.skipped = now, 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "not_logged_since_last", skipped)
	}
	l.log.Warn(msg, args...)
}
