package snmp

import (
	"context"
	"sync"
	"testing"
	"time"
)

// seenSink is a MemorySink that also keeps RecordSeen's calls.
type seenSink struct {
	*MemorySink
	mu   sync.Mutex
	seen map[string][]time.Time
}

func (s *seenSink) RecordSeen(_ context.Context, addr string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[addr] = append(s.seen[addr], at)
	return nil
}

func (s *seenSink) last(addr string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.seen[addr]); n > 0 {
		return s.seen[addr][n-1]
	}
	if inv, ok := s.MemorySink.Devices[addr]; ok {
		return inv.SeenAt
	}
	return time.Time{}
}

// TestPollerSeenEveryPoll: polled for ten short intervals on snmpsim, the
// device's "seen" time moves with every poll it answers, not only when it
// is identified (once a day): after each cycle it is that cycle's.
func TestPollerSeenEveryPoll(t *testing.T) {
	port := startSnmpsim(t, 1)[0]
	sink := &seenSink{MemorySink: NewMemorySink(time.Hour, 0), seen: map[string][]time.Time{}}
	interval := time.Second // the poller's shortest
	p, err := NewPoller(PollerConfig{Workers: 1, Interval: interval}, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	target := simTarget(port, "kyocera-idle")
	if err := p.SetTargets([]Target{target}); err != nil {
		t.Fatal(err)
	}
	addr := target.Addr()
	cycles := 0
	start := time.Now()
	if err := p.Run(context.Background(), 10, func(st CycleStats) {
		cycles++
		seen := sink.last(addr)
		// Reachable as the daemon judges it: seen within two intervals.
		if st.Answered != 1 || time.Since(seen) > 2*interval {
			t.Errorf("cycle %d: answered %d, seen %s ago", cycles, st.Answered, time.Since(seen))
		}
	}); err != nil {
		t.Fatal(err)
	}
	if cycles != 10 {
		t.Fatalf("%d cycles", cycles)
	}
	sink.mu.Lock()
	n := len(sink.seen[addr])
	sink.mu.Unlock()
	if n != 9 { // the first poll identifies (RecordDevice), the nine others are seen
		t.Errorf("RecordSeen %d times in 10 polls, want 9", n)
	}
	if time.Since(start) < 9*interval {
		t.Errorf("ten cycles took only %s", time.Since(start))
	}
}
