// MemorySink and Deduper are test helpers: an in-memory Store.

package snmp

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"
)

// Deduper remembers event keys for a window. Seeing a key again refreshes
// it, so a condition that stays on the panel is one event; it becomes new
// again only after a quiet window. It holds at most max keys (oldest
// dropped first), so a flood cannot grow memory.
type Deduper struct {
	mu     sync.Mutex
	window time.Duration
	max    int
	seen   map[string]time.Time
}

// NewDeduper returns a Deduper; window 0 means 30 minutes, max 0 means 100,000.
func NewDeduper(window time.Duration, max int) *Deduper {
	if window <= 0 {
		window = 30 * time.Minute
	}
	if max <= 0 {
		max = 100_000
	}
	return &Deduper{window: window, max: max, seen: map[string]time.Time{}}
}

// Fresh reports whether key was not seen within the window before now, and
// records it as seen at now.
func (d *Deduper) Fresh(key string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	last, ok := d.seen[key]
	d.seen[key] = now
	if len(d.seen) > d.max {
		d.evict(now)
	}
	return !ok || now.Sub(last) >= d.window
}

// evict drops expired keys, then the oldest until under max.
func (d *Deduper) evict(now time.Time) {
	var oldestKey string
	var oldest time.Time
	for k, t := range d.seen {
		if now.Sub(t) >= d.window {
			delete(d.seen, k)
			continue
		}
		if oldestKey == "" || t.Before(oldest) {
			oldestKey, oldest = k, t
		}
	}
	for len(d.seen) > d.max && oldestKey != "" {
		delete(d.seen, oldestKey)
		oldestKey = ""
		for k, t := range d.seen {
			if oldestKey == "" || t.Before(oldest) {
				oldestKey, oldest = k, t
			}
		}
	}
}

// MemorySink keeps devices and fresh events in memory (probe, tests).
type MemorySink struct {
	mu      sync.Mutex
	dedup   *Deduper
	Devices map[string]Inventory
	Events  []Event // fresh events, in arrival order
	Dups    int
	max     int
}

// NewMemorySink keeps at most max events (0: 10,000).
func NewMemorySink(window time.Duration, max int) *MemorySink {
	if max <= 0 {
		max = 10_000
	}
	return &MemorySink{dedup: NewDeduper(window, 0), Devices: map[string]Inventory{}, max: max}
}

// RecordDevice implements Store.
func (m *MemorySink) RecordDevice(_ context.Context, inv Inventory) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Devices[inv.Address] = inv
	return nil
}

// RecordSeen implements Store: answered polls are not kept.
func (m *MemorySink) RecordSeen(context.Context, string, time.Time) error { return nil }

// RecordEvents implements Store, one event at a time.
func (m *MemorySink) RecordEvents(ctx context.Context, evs []Event) ([]bool, error) {
	fresh := make([]bool, len(evs))
	for i, ev := range evs {
		fresh[i], _ = m.RecordEvent(ctx, ev)
	}
	return fresh, nil
}

// RecordEvent implements Store.
func (m *MemorySink) RecordEvent(_ context.Context, ev Event) (bool, error) {
	if !m.dedup.Fresh(ev.Key, ev.Time) {
		m.mu.Lock()
		m.Dups++
		m.mu.Unlock()
		return false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.Events) < m.max {
		m.Events = append(m.Events, ev)
	}
	return true, nil
}

// Snapshot returns a copy of the fresh events.
func (m *MemorySink) Snapshot() []Event {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Event(nil), m.Events...)
}

// storeFake is a fake of the state store (store.SNMPSink): an event is
// fresh when its key is not in dups; err fails every call.
type storeFake struct {
	dups map[string]bool
	err  error
	seen []string
}

func (f *storeFake) RecordDevice(context.Context, Inventory) error { return f.err }
func (f *storeFake) RecordEvent(ctx context.Context, ev Event) (bool, error) {
	fresh, err := f.RecordEvents(ctx, []Event{ev})
	if err != nil {
		return false, err
	}
	return fresh[0], nil
}
func (f *storeFake) RecordEvents(_ context.Context, evs []Event) ([]bool, error) {
	if f.err != nil {
		return nil, f.err
	}
	fresh := make([]bool, len(evs))
	for i, ev := range evs {
		fresh[i] = !f.dups[ev.Key]
	}
	return fresh, nil
}
func (f *storeFake) RecordSeen(_ context.Context, address string, _ time.Time) error {
	f.seen = append(f.seen, address)
	return f.err
}

// TestRecorder: stored first, then only the fresh events of a device are
// handed on (a duplicate and an unverified one are not); nothing is handed
// on when the store fails, and the error callback hears every store error;
// answered polls reach the store; a recorded device is indexed.
func TestRecorder(t *testing.T) {
	evs := []Event{{Key: "new", Device: "10.0.0.1:161"}, {Key: "dup", Device: "10.0.0.1:161"},
		{Key: "relay", Device: "mail:relay", Unverified: true}}
	storeErr := errors.New("database is locked")
	for _, c := range []struct {
		name      string
		next      *storeFake
		fresh     []bool
		routed    []string
		failures  int
		wantError bool
	}{
		{name: "stored and routed", next: &storeFake{dups: map[string]bool{"dup": true}}, fresh: []bool{true, false, true}, routed: []string{"new"}},
		{name: "store fails", next: &storeFake{err: storeErr}, failures: 3, wantError: true},
	} {
		var routed []string
		failures := 0
		r := NewRecorder(c.next, nil, func(_ context.Context, ev Event) { routed = append(routed, ev.Key) },
			func(err error) {
				if !errors.Is(err, storeErr) {
					t.Errorf("%s: onError(%v)", c.name, err)
				}
				failures++
			})
		fresh, err := r.Events(context.Background(), evs)
		if (err != nil) != c.wantError || !slices.Equal(fresh, c.fresh) || !slices.Equal(routed, c.routed) {
			t.Errorf("%s: fresh %v routed %v err %v", c.name, fresh, routed, err)
		}
		r.Device(context.Background(), Inventory{Address: "10.0.0.1:161"})
		r.Seen(context.Background(), "10.0.0.1:161", time.Now())
		if failures != c.failures || !slices.Equal(c.next.seen, []string{"10.0.0.1:161"}) {
			t.Errorf("%s: %d failures, seen %v", c.name, failures, c.next.seen)
		}
		if dev, ok := r.index.ByIP(netip.MustParseAddr("10.0.0.1")); !ok || dev != "10.0.0.1:161" {
			t.Errorf("%s: recorded device not indexed: %q %v", c.name, dev, ok)
		}
	}
	// A store that keeps no answered polls, and no callback: stored only;
	// one event is recorded as one.
	r := NewRecorder(NewMemorySink(time.Hour, 0), nil, nil, nil)
	if err := r.Seen(context.Background(), "10.0.0.1:161", time.Now()); err != nil {
		t.Fatal(err)
	}
	if fresh, err := r.Event(context.Background(), evs[0]); err != nil || !fresh {
		t.Fatalf("memory sink: %v %v", fresh, err)
	}
	if fresh, err := r.Event(context.Background(), evs[0]); err != nil || fresh || r.Fresh() != 1 {
		t.Fatalf("memory sink, again: %v %v, %d fresh", fresh, err, r.Fresh())
	}
}
