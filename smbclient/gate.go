package smbclient

import (
	"context"
	"time"
)

// pendingWait bounds how long a gate waits for logons in flight elsewhere
// when they alone keep the budget spent; pendingPoll is how often it asks
// again.
const (
	pendingWait = 10 * time.Second
	pendingPoll = 100 * time.Millisecond
)

// Admit is the budget gate: it reserves an attempt with l at a (its At and
// window from now) and, while the budget is spent only because other
// logons of the account are in flight (Refusal.Pending), waits for them up
// to pendingWait: a logon in flight elsewhere is never a failure, and once
// it succeeds the budget is back.
func Admit(ctx context.Context, l Ledger, a Attempt, now func() time.Time, window time.Duration, budget int) (int64, *Refusal, error) {
	start := time.Now()
	for {
		a.At = now()
		id, r, err := l.Reserve(ctx, a, a.At.Add(-window), budget)
		if err != nil || r == nil || r.Pending == 0 || time.Since(start) >= pendingWait {
			return id, r, err
		}
		t := time.NewTimer(pendingPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return id, r, nil
		case <-t.C:
		}
	}
}
