package loglimit

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

type counting struct {
	n       atomic.Int64
	skipped atomic.Int64
}

func (h *counting) Enabled(context.Context, slog.Level) bool { return true }
func (h *counting) Handle(_ context.Context, r slog.Record) error {
	h.n.Add(1)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "not_logged_since_last" {
			h.skipped.Add(a.Value.Int64())
		}
		return true
	})
	return nil
}
func (h *counting) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *counting) WithGroup(string) slog.Handler      { return h }

// One line of a kind gets through per period; the next one counts the rest.
func TestLimiter(t *testing.T) {
	h := &counting{}
	l := New(slog.New(h), time.Minute)
	now := time.Unix(0, 0)
	l.Now = func() time.Time { return now }
	for range 1000 {
		l.Warn("junk", "x")
	}
	l.Warn("other", "y")
	now = now.Add(time.Minute)
	l.Warn("junk", "x")
	if n, s := h.n.Load(), h.skipped.Load(); n != 3 || s != 999 {
		t.Errorf("%d lines, %d counted as left out; want 3, 999", n, s)
	}
}
