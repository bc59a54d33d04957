package smbcheck

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"
)

// A Ledger remembers failed logons per account, across checks and processes,
// so that repeated checks — by hand or scheduled — can never add up to a
// lockout. The CLI and the daemon keep it in the store; without one a check
// keeps it in memory.
//
// An attempt is reserved before the logon is sent and counts as a failure
// until it is resolved: a crash between the two errs on the side of the
// account.
type Ledger interface {
	// Reserve records a pending attempt of form on account unless the
	// account's failures since since (pending ones included) reach budget,
	// the same form already failed since since, or a lockout was observed
	// since since. It returns the new attempt's id, or 0 and why not.
	Reserve(ctx context.Context, a Attempt, since time.Time, budget int) (int64, *Refusal, error)
	// Resolve records the outcome of attempt id: a success clears the
	// account's ledger; a logon failure keeps it with its cause; Cancel
	// drops it (no logon decision was made, e.g. the server never answered).
	Resolve(ctx context.Context, id int64, o Outcome) error
	// Key is the secret that fingerprints passwords in form keys (see
	// FormKey); it stays with the ledger.
	Key(ctx context.Context) ([]byte, error)
}

// Attempt is one logon about to be sent.
type Attempt struct {
	Account string // account key: see AccountKey
	Form    string // form key: see FormKey (includes a password fingerprint)
	Typed   string // the form as typed, for humans
	At      time.Time
}

// Outcome of an attempt.
type Outcome struct {
	Kind   OutcomeKind
	Cause  Cause  // for Failed
	Status string // NT status text, for Failed
}

// OutcomeKind says how an attempt ended.
type OutcomeKind int

// Outcome kinds.
const (
	Succeeded OutcomeKind = iota + 1
	Failed
	// Cancelled is for an attempt whose AUTHENTICATE never left (the check
	// stopped at the gate); once it has left, the outcome is Failed or
	// Succeeded whatever happens to the connection.
	Cancelled
)

// LedgerEntry is one remembered failure.
type LedgerEntry struct {
	Account string
	Form    string
	Typed   string
	At      time.Time
	Cause   Cause // "" while pending (or when the process died before resolving)
	Status  string
}

// Refusal says why no attempt may be made now.
type Refusal struct {
	Reason  string       // human sentence
	Last    *LedgerEntry // the last observed failure, if any
	RetryAt time.Time    // when an attempt may be made again
}

// AccountKey identifies an account for the ledger: the authority (NTLM
// domain the server belongs to, or its host name) and the base user name,
// case-folded.
func AccountKey(authority, user string) string {
	return strings.ToLower(authority) + `\` + strings.ToLower(user)
}

// FormKey identifies a form together with a fingerprint of the password, so
// that a corrected password on the MFP counts as a new attempt. The
// fingerprint is an HMAC under key: it cannot be reversed without the key,
// which stays with the ledger.
func FormKey(f Form, password string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(password))
	return fmt.Sprintf("%s|%s|%s", strings.ToLower(f.Domain), strings.ToLower(f.User), hex.EncodeToString(m.Sum(nil))[:16])
}

// spell says a window in words: "30 minutes", "2 hours", else Go's form.
func spell(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// Judge applies the ledger rules to the entries of one account within the
// window (window = a.At - since): every Ledger implementation's Reserve
// calls it inside its own transaction.
func Judge(entries []LedgerEntry, a Attempt, budget int, window time.Duration) *Refusal {
	var last *LedgerEntry
	for i := range entries {
		if last == nil || entries[i].At.After(last.At) {
			last = &entries[i]
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Cause == CauseAccountLocked {
			return &Refusal{Reason: fmt.Sprintf("the account was seen locked out at %s; no logon is replayed until the window has passed", e.At.Format(time.TimeOnly)),
				Last: e, RetryAt: e.At.Add(window)}
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Form == a.Form {
			return &Refusal{Reason: fmt.Sprintf("this user name form and password already failed at %s; it is not replayed again within %s", e.At.Format(time.TimeOnly), spell(window)),
				Last: e, RetryAt: e.At.Add(window)}
		}
	}
	if len(entries) >= budget {
		r := &Refusal{Last: last}
		if budget == 0 {
			r.Reason = "the failure budget is 0: no logon that could fail is replayed"
		} else {
			oldest := entries[0].At
			for _, e := range entries {
				if e.At.Before(oldest) {
					oldest = e.At
				}
			}
			r.Reason = fmt.Sprintf("the failure budget (%d per %s) is spent", budget, spell(window))
			r.RetryAt = oldest.Add(window)
		}
		return r
	}
	return nil
}

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
