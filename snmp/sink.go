package snmp

import (
	"context"
	"time"
)

// Sink receives what the poller, the trap listener and the mail listener
// learn. Record returns fresh=false for a duplicate (same Key within the
// sink's window). Implementations must be safe for concurrent use.
type Sink interface {
	RecordDevice(ctx context.Context, inv Inventory) error
	RecordEvent(ctx context.Context, ev Event) (fresh bool, err error)
}

// SeenSink is a Sink that also keeps when each device last answered a
// poll: the poller tells it after every answered status poll (identifying a
// device, every 24 h, records the whole inventory instead). A device's
// "seen" time then moves with every poll it answers.
type SeenSink interface {
	Sink
	RecordSeen(ctx context.Context, address string, at time.Time) error
}

// BatchSink is a Sink that records many events in one write (the store:
// one transaction). The trap listener writes its queue through it when its
// sink has it; fresh[i] answers for evs[i].
type BatchSink interface {
	Sink
	RecordEvents(ctx context.Context, evs []Event) (fresh []bool, err error)
}

// recordEvents writes evs through s, in one batch when s can.
func recordEvents(ctx context.Context, s Sink, evs []Event) ([]bool, error) {
	if b, ok := s.(BatchSink); ok {
		return b.RecordEvents(ctx, evs)
	}
	fresh := make([]bool, len(evs))
	for i, ev := range evs {
		f, err := s.RecordEvent(ctx, ev)
		if err != nil {
			return fresh[:i], err
		}
		fresh[i] = f
	}
	return fresh, nil
}
