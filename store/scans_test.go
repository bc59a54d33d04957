package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
)

func TestScansConditionalUpdate(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.Scans()
	now := time.Now().UTC().Truncate(time.Millisecond)
	id, err := c.AddScan(ctx, receiver.Scan{Destination: "d", Folder: "d", File: "a.pdf", Size: 3, SHA256: "x", State: receiver.Held, ReceivedAt: now, HeldPath: "held/a"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := c.Scan(ctx, id)
	if err != nil || sc.File != "a.pdf" || !sc.ReceivedAt.Equal(now) || !sc.DeliveredAt.IsZero() {
		t.Fatalf("%+v %v", sc, err)
	}
	sc.State, sc.Claim = receiver.Delivering, "1:a"
	if ok, err := c.UpdateScan(ctx, sc, receiver.Held); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	// a second claimer loses
	if ok, err := c.UpdateScan(ctx, sc, receiver.Held); ok || err != nil {
		t.Fatalf("second claim: %v %v", ok, err)
	}
	d := "d"
	due, err := c.Scans(ctx, receiver.ScanQuery{States: []receiver.State{receiver.Delivering}, Destination: &d, DueBefore: now})
	if err != nil || len(due) != 1 || due[0].Claim != "1:a" {
		t.Fatalf("%+v %v", due, err)
	}
	if ok, _ := c.DeleteScan(ctx, id, receiver.Held); ok {
		t.Fatal("deleted a row in another state")
	}
	sc.State, sc.Error = receiver.Failed, "boom"
	if ok, err := c.UpdateScan(ctx, sc, receiver.Delivering); !ok || err != nil {
		t.Fatalf("fail: %v %v", ok, err)
	}
	c.AddScan(ctx, receiver.Scan{Folder: "x", File: "b", Size: 4, SHA256: "y", State: receiver.Delivered, ReceivedAt: now.Add(-time.Hour)})
	stats, err := c.ScanStats(ctx)
	if err != nil || stats.Counts[receiver.Failed] != 1 || stats.Counts[receiver.Delivered] != 1 || stats.HeldBytes != 3 ||
		!stats.OldestHeld.Equal(now) || stats.LastFailed == nil || stats.LastFailed.Error != "boom" {
		t.Fatalf("stats %+v %v", stats, err)
	}
	if _, err := c.Scan(ctx, 99); err == nil {
		t.Fatal("missing row found")
	}
}

// TestScansClaimRace: a claim is one conditional UPDATE (execOne): among
// claimers racing for one held scan from two handles on one database (serve
// and `receiver deliver`), exactly one wins and none fails.
func TestScansClaimRace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var handles [2]*Scans
	for i := range handles {
		s, err := OpenDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		handles[i] = s.Scans()
	}
	for row := range 10 {
		id, err := handles[0].AddScan(ctx, receiver.Scan{Destination: "d", Folder: "d", File: fmt.Sprintf("%d.pdf", row), Size: 1, SHA256: "x",
			State: receiver.Held, ReceivedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := handles[0].Scan(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		type claim struct {
			ok  bool
			err error
		}
		out := make(chan claim)
		for i := range 8 {
			go func() {
				mine := sc
				mine.State, mine.Claim = receiver.Delivering, fmt.Sprintf("%d:%d", i, row)
				ok, err := handles[i%2].UpdateScan(ctx, mine, receiver.Held)
				out <- claim{ok, err}
			}()
		}
		won := 0
		for range 8 {
			c := <-out
			if c.err != nil {
				t.Errorf("row %d: a claim failed: %v", row, c.err)
			}
			if c.ok {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("row %d: %d claims won, want 1", row, won)
		}
	}
}

// The web's lists take the newest scans first, so a limit keeps the newest.
func TestScansNewestFirst(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := s.Scans()
	for i := 0; i < 5; i++ {
		if _, err := c.AddScan(ctx, receiver.Scan{Folder: "f", File: fmt.Sprintf("%d.pdf", i), State: receiver.Delivered, ReceivedAt: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.Scans(ctx, receiver.ScanQuery{Limit: 2, Newest: true})
	if err != nil || len(got) != 2 || got[0].File != "4.pdf" || got[1].File != "3.pdf" {
		t.Fatalf("newest: %+v %v", got, err)
	}
	got, _ = c.Scans(ctx, receiver.ScanQuery{Limit: 2})
	if len(got) != 2 || got[0].File != "0.pdf" {
		t.Fatalf("oldest: %+v", got)
	}
}

func TestScanCounts(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, st := range []receiver.State{receiver.Held, receiver.Held, receiver.Delivered, receiver.Incomplete} {
		if _, err := s.Scans().AddScan(ctx, receiver.Scan{Folder: "f", File: fmt.Sprintf("%d.pdf", i), State: st, ReceivedAt: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Scans().Counts(ctx)
	if err != nil || len(got) != 3 || got[receiver.Held] != 2 || got[receiver.Delivered] != 1 || got[receiver.Incomplete] != 1 {
		t.Fatalf("%v %v", got, err)
	}
}
