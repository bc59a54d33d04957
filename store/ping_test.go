package store

import (
	"context"
	"testing"
)

// Ping answers while the store is open and fails once it is not (the
// daemon's watchdog then stays unpetted).
func TestPing(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("open store: %v", err)
	}
	s.Close()
	if err := s.Ping(ctx); err == nil {
		t.Fatal("a closed store answered the ping")
	}
}
