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

// RouteSink is the sink serve and `snmp watch` give the watcher: it
// stores through Next (in one batch when Next can) and then hands each
// fresh event that is a device's to Route; an unverified one (a sender not
// proven to be the device) is stored only. An answered poll's time goes
// to Next when it keeps them (SeenSink). Fail, when set, hears every error
// Next returns (serve states it as the "store" fault).
type RouteSink struct {
	Next  Sink
	Route func(ctx context.Context, ev Event)
	Fail  func(error)
}

var (
	_ BatchSink = (*RouteSink)(nil)
	_ SeenSink  = (*RouteSink)(nil)
)

// RecordDevice stores inv.
func (s *RouteSink) RecordDevice(ctx context.Context, inv Inventory) error {
	return s.failed(s.Next.RecordDevice(ctx, inv))
}

// RecordSeen stores when a device answered, when Next keeps it.
func (s *RouteSink) RecordSeen(ctx context.Context, address string, at time.Time) error {
	if ss, ok := s.Next.(SeenSink); ok {
		return s.failed(ss.RecordSeen(ctx, address, at))
	}
	return nil
}

// RecordEvent stores and routes one event.
func (s *RouteSink) RecordEvent(ctx context.Context, ev Event) (bool, error) {
	fresh, err := s.RecordEvents(ctx, []Event{ev})
	if err != nil {
		return false, err
	}
	return fresh[0], nil
}

// RecordEvents stores evs, then routes the fresh ones that are a device's;
// nothing is routed when they could not be stored.
func (s *RouteSink) RecordEvents(ctx context.Context, evs []Event) ([]bool, error) {
	fresh, err := recordEvents(ctx, s.Next, evs)
	if err != nil {
		return nil, s.failed(err)
	}
	for i, ev := range evs {
		if fresh[i] && !ev.Unverified && s.Route != nil {
			s.Route(ctx, ev)
		}
	}
	return fresh, nil
}

func (s *RouteSink) failed(err error) error {
	if err != nil && s.Fail != nil {
		s.Fail(err)
	}
	return err
}
