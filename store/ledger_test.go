package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/smbclient"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", DefaultFile)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestOpenMigratesOnceAndLocksDown(t *testing.T) {
	s, path := openTemp(t)
	s.Close()
	s2, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	var n int
	if err := s2.db.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	ms, _ := loadMigrations()
	if n != len(ms) {
		t.Errorf("%d migrations recorded, want %d", n, len(ms))
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestLedgerRulesPersist(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	l := s.Ledger()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	window := 30 * time.Minute
	a := smbclient.Attempt{Account: `kyolab\bob`, Form: "f1", Typed: "bob", At: now}
	id, r, err := l.Reserve(ctx, a, now.Add(-window), 2)
	if err != nil || r != nil || id == 0 {
		t.Fatalf("reserve: %d %v %v", id, r, err)
	}
	// The process "dies" here: the pending attempt must still count.
	s.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	l2 := s2.Ledger()
	b := smbclient.Attempt{Account: `kyolab\bob`, Form: "f2", Typed: "KYOLAB\\bob", At: now.Add(time.Minute)}
	id2, r, err := l2.Reserve(ctx, b, b.At.Add(-window), 2)
	if err != nil || r != nil {
		t.Fatalf("second reserve: %v %v", r, err)
	}
	if err := l2.Resolve(ctx, id2, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials, Status: "0xC000006D"}); err != nil {
		t.Fatal(err)
	}
	c := smbclient.Attempt{Account: `kyolab\bob`, Form: "f3", Typed: "bob@x", At: now.Add(2 * time.Minute)}
	if _, r, _ := l2.Reserve(ctx, c, c.At.Add(-window), 2); r == nil {
		t.Fatal("a crashed pending attempt did not count toward the budget")
	}
	// Same form refused with the last observation.
	if _, r, _ := l2.Reserve(ctx, b, b.At.Add(-window), 5); r == nil || r.Last == nil || r.Last.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("same form: %+v", r)
	}
	// Success clears the account.
	d := smbclient.Attempt{Account: `kyolab\bob`, Form: "f4", At: now.Add(window + 3*time.Minute)}
	id4, r, _ := l2.Reserve(ctx, d, d.At.Add(-window), 2)
	if r != nil {
		t.Fatalf("after the window: %v", r.Reason)
	}
	l2.Resolve(ctx, id4, smbclient.Outcome{Kind: smbclient.Succeeded})
	var n int
	s2.db.QueryRow("SELECT count(*) FROM logon_attempts").Scan(&n)
	if n != 0 {
		t.Errorf("%d rows left after a success", n)
	}
	if _, err := l2.Key(ctx); !errors.Is(err, ErrNoLedgerKey) {
		t.Errorf("key before unlock: %v", err)
	}
	keyPath := filepath.Join(t.TempDir(), seal.FileName)
	if _, err := s2.UnlockKey(ctx, keyPath); err != nil {
		t.Fatal(err)
	}
	k1, _ := l2.Key(ctx)
	k2, _ := s2.Ledger().Key(ctx)
	if len(k1) != 32 || string(k1) != string(k2) {
		t.Error("ledger key not stable")
	}
}

// TestLedgerConcurrentProcesses: two handles on one file (as the CLI and
// the daemon) race for the last unit of budget; only one may win.
func TestLedgerConcurrentProcesses(t *testing.T) {
	ctx := context.Background()
	_, path := openTemp(t)
	var stores []*Store
	for range 4 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	now := time.Now()
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := smbclient.Attempt{Account: `kyolab\carol`, Form: string(rune('a' + i)), At: now}
			id, _, err := stores[i%len(stores)].Ledger().Reserve(ctx, a, now.Add(-time.Hour), 2)
			if err != nil {
				t.Error(err)
				return
			}
			if id != 0 {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if granted != 2 {
		t.Fatalf("%d attempts granted against a budget of 2", granted)
	}
}
