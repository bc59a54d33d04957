package smbclient

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"
)

// MemoryLedger keeps the ledger in memory (one check, or tests).
type MemoryLedger struct {
	mu      sync.Mutex
	next    int64
	entries map[int64]LedgerEntry
	key     []byte
}

// Key implements Ledger with a random key made on first use.
func (m *MemoryLedger) Key(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.key == nil {
		m.key = make([]byte, 32)
		if _, err := rand.Read(m.key); err != nil {
			return nil, err
		}
	}
	return m.key, nil
}

// Reserve implements Ledger.
func (m *MemoryLedger) Reserve(_ context.Context, a Attempt, since time.Time, budget int) (int64, *Refusal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[int64]LedgerEntry{}
	}
	var in []LedgerEntry
	for _, e := range m.entries {
		if e.Account == a.Account && !e.At.Before(since) {
			in = append(in, e)
		}
	}
	if r := Judge(in, a, budget, a.At.Sub(since)); r != nil {
		return 0, r, nil
	}
	m.next++
	m.entries[m.next] = LedgerEntry{Account: a.Account, Form: a.Form, Typed: a.Typed, At: a.At}
	return m.next, nil, nil
}

// Resolve implements Ledger.
func (m *MemoryLedger) Resolve(_ context.Context, id int64, o Outcome) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[id]
	if !ok {
		return fmt.Errorf("ledger: no attempt %d", id)
	}
	switch o.Kind {
	case Succeeded:
		// The success and the resolved failures before it; attempts still
		// pending stay (another logon of the account may be in flight).
		delete(m.entries, id)
		for k, x := range m.entries {
			if x.Account == e.Account && x.Cause != "" && k < id {
				delete(m.entries, k)
			}
		}
	case Failed:
		e.Cause, e.Status = o.Cause, o.Status
		m.entries[id] = e
	case Cancelled:
		delete(m.entries, id)
	}
	return nil
}
