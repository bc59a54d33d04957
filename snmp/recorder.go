package snmp

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Store keeps what a watch learns: the devices, when each last answered a
// poll, and the events, de-duplicated (fresh=false for the same Key within
// the store's window). The state store is one (store.SNMPSink).
// Implementations must be safe for concurrent use.
type Store interface {
	RecordDevice(ctx context.Context, inv Inventory) error
	RecordSeen(ctx context.Context, address string, at time.Time) error
	RecordEvent(ctx context.Context, ev Event) (fresh bool, err error)
	// RecordEvents records many events in one write; fresh[i] answers
	// for evs[i].
	RecordEvents(ctx context.Context, evs []Event) (fresh []bool, err error)
}

// Recorder is how the poller, the trap listener and the mail listener
// record what they learn: a device goes into the index (traps and mail
// are matched with it) and the store; an event into the store, and each
// fresh one that is a device's (not Unverified: a sender not proven to be
// the device) is then handed to the callback — serve's monitor, `snmp
// watch`'s output. Nothing is handed on that could not be stored.
type Recorder struct {
	store   Store
	index   *DeviceIndex
	onEvent func(ctx context.Context, ev Event)
	onError func(error)
	fresh   atomic.Int64
}

// NewRecorder records into st and indexes the devices in index (nil: an
// index of its own). onEvent (nil: none) is told of every fresh event of a
// device once stored; onError (nil: none) hears every error st returns.
func NewRecorder(st Store, index *DeviceIndex, onEvent func(ctx context.Context, ev Event), onError func(error)) *Recorder {
	if index == nil {
		index = NewDeviceIndex()
	}
	return &Recorder{store: st, index: index, onEvent: onEvent, onError: onError}
}

// Device indexes and stores inv.
func (r *Recorder) Device(ctx context.Context, inv Inventory) error {
	r.index.Add(inv)
	return r.failed(r.store.RecordDevice(ctx, inv))
}

// Seen stores when the device at address answered a poll.
func (r *Recorder) Seen(ctx context.Context, address string, at time.Time) error {
	return r.failed(r.store.RecordSeen(ctx, address, at))
}

// Event stores ev and hands it on when it is fresh and a device's.
func (r *Recorder) Event(ctx context.Context, ev Event) (fresh bool, err error) {
	fresh, err = r.store.RecordEvent(ctx, ev)
	if err != nil {
		return false, r.failed(err)
	}
	r.tell(ctx, ev, fresh)
	return fresh, nil
}

// Events stores evs in one write, then hands on each fresh one that is a
// device's; fresh[i] answers for evs[i].
func (r *Recorder) Events(ctx context.Context, evs []Event) (fresh []bool, err error) {
	fresh, err = r.store.RecordEvents(ctx, evs)
	if err != nil {
		return nil, r.failed(err)
	}
	for i, ev := range evs {
		r.tell(ctx, ev, fresh[i])
	}
	return fresh, nil
}

// Fresh is how many fresh events were recorded.
func (r *Recorder) Fresh() int64 { return r.fresh.Load() }

func (r *Recorder) tell(ctx context.Context, ev Event, fresh bool) {
	if !fresh {
		return
	}
	r.fresh.Add(1)
	if !ev.Unverified && r.onEvent != nil {
		r.onEvent(ctx, ev)
	}
}

func (r *Recorder) failed(err error) error {
	if err != nil && r.onError != nil {
		r.onError(err)
	}
	return err
}

// partLog checks what each of the SNMP parts (poller, trap and mail
// listener) needs, rules and a recorder, and returns its logger (log, or
// one that discards) scoped to component; what names the part in the
// error.
func partLog(what, component string, rules *Rules, rec *Recorder, log *slog.Logger) (*slog.Logger, error) {
	if rules == nil || rec == nil {
		return nil, errors.New(what + ": rules and recorder are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With("component", component), nil
}
