package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

// The replay guard's state survives a reopen of the store, engine IDs and
// digests byte for byte (NUL bytes included); a save replaces the last one,
// and what is saved is bounded.
func TestReplayStateSaved(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sw.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 12, 0, 0, 123, time.UTC)
	st := snmp.ReplayState{
		Engines: []snmp.ReplayEngine{{EngineID: []byte("\x80\x00\x1f\x88\x00"), Boots: 3, Time: 1001, At: at}},
		Seen:    []snmp.ReplaySeen{{EngineID: []byte("\x80\x00\x1f\x88\x00"), Digest: []byte("\x00\x01digest\x00"), At: at}},
	}
	if err := s.Replay().SaveReplay(ctx, st); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Replay().LoadReplay(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(st) {
		t.Fatalf("loaded %+v, saved %+v", got, st)
	}
	var big snmp.ReplayState
	for i := range maxReplayEngines + 10 {
		big.Engines = append(big.Engines, snmp.ReplayEngine{EngineID: fmt.Appendf(nil, "e%d", i), At: at})
	}
	for i := range maxReplayDigests + 10 {
		big.Seen = append(big.Seen, snmp.ReplaySeen{EngineID: []byte("e"), Digest: fmt.Appendf(nil, "d%d", i), At: at})
	}
	t0 := time.Now()
	if err := s.Replay().SaveReplay(ctx, big); err != nil {
		t.Fatal(err)
	}
	saved := time.Since(t0)
	t0 = time.Now()
	got, err = s.Replay().LoadReplay(ctx)
	t.Logf("a full state (%d engines, %d digests offered): saved in %v, read in %v", len(big.Engines), len(big.Seen),
		saved.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	if err != nil || len(got.Engines) != maxReplayEngines || len(got.Seen) != maxReplayDigests {
		t.Fatalf("after an oversize save: %d engines, %d digests, %v", len(got.Engines), len(got.Seen), err)
	}
}
