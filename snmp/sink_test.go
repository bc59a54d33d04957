// MemorySink and Deduper are test helpers: an in-memory Sink.

package snmp

import (
	"context"
	"sync"
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

// RecordDevice implements Sink.
func (m *MemorySink) RecordDevice(_ context.Context, inv Inventory) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Devices[inv.Address] = inv
	return nil
}

// RecordEvent implements Sink.
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
