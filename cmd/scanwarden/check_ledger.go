package main

import (
	"context"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/store"
)

// storeLedger is the failed-logon ledger of the state store, opened in the
// background.
type storeLedger struct {
	ready chan struct{}
	st    *store.Store
	l     *store.Ledger
	err   error
	// keep stores the report (a registry destination's check).
	keep func(smbcheck.Report) error
}

// openStoreLedger opens the data dir's store with its sealing key (made on
// first use) in the background: the ledger's password fingerprints are
// keyed from it, and it never goes into the database.
func openStoreLedger(ctx context.Context, env environ, df *dataFlags) *storeLedger {
	s := &storeLedger{ready: make(chan struct{})}
	go func() {
		defer close(s.ready)
		if s.st, s.err = df.open(ctx, env, true); s.err != nil {
			s.err = fmt.Errorf("the ledger's store and key: %w", s.err)
			return
		}
		s.l = s.st.Ledger()
	}()
	return s
}

func (s *storeLedger) wait(ctx context.Context) (*store.Ledger, error) {
	select {
	case <-s.ready:
		return s.l, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *storeLedger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	l, err := s.wait(ctx)
	if err != nil {
		return 0, nil, err
	}
	return l.Reserve(ctx, a, since, budget)
}

func (s *storeLedger) Resolve(ctx context.Context, id int64, o smbclient.Outcome) error {
	l, err := s.wait(ctx)
	if err != nil {
		return err
	}
	return l.Resolve(ctx, id, o)
}

func (s *storeLedger) Key(ctx context.Context) ([]byte, error) {
	l, err := s.wait(ctx)
	if err != nil {
		return nil, err
	}
	return l.Key(ctx)
}

// Close waits for the store and closes it.
func (s *storeLedger) Close() error {
	<-s.ready
	if s.st != nil {
		return s.st.Close()
	}
	return nil
}
