package snmp

import (
	"log/slog"
	"sync"
	"time"
)

// logLimiter keeps junk from flooding the log: at most one line per kind
// every `every`; the next line says how many were left out meanwhile.
type logLimiter struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu    sync.Mutex
	kinds map[string]*limitedKind
}

type limitedKind struct {
	last    time.Time
	skipped int64
}

func newLogLimiter(log *slog.Logger, every time.Duration) *logLimiter {
	return &logLimiter{log: log, every: every, now: time.Now, kinds: map[string]*limitedKind{}}
}

// warn logs msg with args at WARN unless a line of kind was logged less
// than `every` ago; then it only counts.
func (l *logLimiter) warn(kind, msg string, args ...any) {
	now := l.now()
	l.mu.Lock()
	k := l.kinds[kind]
	if k == nil {
		k = &limitedKind{}
		l.kinds[kind] = k
	}
	if !k.last.IsZero() && now.Sub(k.last) < l.every {
		k.skipped++
		l.mu.Unlock()
		return
	}
	skipped := k.skipped
	k.last, k.skipped = now, 0
	l.mu.Unlock()
	if skipped > 0 {
		args = append(args, "not_logged_since_last", skipped)
	}
	l.log.Warn(msg, args...)
}
