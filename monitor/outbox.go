package monitor

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// outbox sends the notifications in the background, each bounded by
// timeout, under a context of its own: Shutdown lets them use the rest of
// the drain time, then cancels them.
type outbox struct {
	timeout time.Duration
	ctx     context.Context // set by open
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	n       atomic.Int64 // being sent (Stats.Notifying)
}

func (o *outbox) open(ctx context.Context) {
	o.ctx, o.cancel = context.WithCancel(context.WithoutCancel(ctx))
}

// send runs fn in the background; it counts as being sent until fn
// returns.
func (o *outbox) send(fn func(ctx context.Context)) {
	o.n.Add(1)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer o.n.Add(-1)
		nctx, cancel := context.WithTimeout(o.ctx, o.timeout)
		defer cancel()
		fn(nctx)
	}()
}

func (o *outbox) sending() int { return int(o.n.Load()) }

// drain waits for what is being sent until deadline, then cancels it and
// waits for it to return.
func (o *outbox) drain(deadline time.Time) {
	done := make(chan struct{})
	go func() { o.wg.Wait(); close(done) }()
	t := time.NewTimer(max(0, time.Until(deadline)))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		o.cancel()
		<-done
	}
	o.cancel()
}
