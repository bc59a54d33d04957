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

	"github.com/scanwarden/scanwarden"
)

// A Ledger remembers failed logons per account, across checks and processes,
// so that repeated checks — by hand or scheduled — can never add up to a
// lockout. The CLI and the daemon keep it in the store; without one a check
// keeps it in memory.
//
// An attempt is reserved before the logon is sent and counts toward the
// budget until it is resolved. What the rules make of an entry (see Judge):
//   - a definite failure (the server refused this form and password:
//     bad-credentials, locked, disabled, …) counts toward the budget and
//     blocks the same form and password for the window;
//   - a pending attempt (a logon in flight, here or in another process) and
//     one whose outcome is unknown (no answer, a dropped connection, or the
//     process died before resolving it: Interrupted) count toward the
//     budget and are no failure: the next logon of that form and password
//     may be sent as soon as the budget allows it (the gate first waits up
//     to 10 s for the answer of the same form's logon in flight);
//   - a success clears the account's resolved entries before it (the DC
//     resets badPwdCount on a successful logon), the unknown and
//     interrupted ones included; pending ones stay;
//   - interrupted entries of a form and password that had succeeded before
//     them (and not definitely failed since: LedgerEntry.KnownGood) count
//     together as one, however many crashes there were. Either the
//     password was still right and the DC counted none of them, or it was
//     changed on the DC since — and Active Directory does not count a bad
//     logon made with one of the account's two previous passwords (its
//     N-2 history check): the one slot is kept for what no directory rule
//     covers (a local account of a standalone server, a third change).
type Ledger interface {
	// Reserve records a pending attempt of form on account unless the
	// account's entries since since (pending ones included) reach budget,
	// the same form and password definitely failed since since, or a
	// lockout was observed since since. It returns the new attempt's id, or
	// 0 and why not.
	Reserve(ctx context.Context, a Attempt, since time.Time, budget int) (int64, *Refusal, error)
	// Resolve records the outcome of attempt id: a success clears the
	// account's ledger; a logon failure keeps it with its cause; Cancelled
	// drops it (no logon decision the DC counts was made, e.g. the server
	// never answered the NEGOTIATE, or refused NTLM before any password
	// was judged).
	Resolve(ctx context.Context, id int64, o Outcome) error
	// Key is the secret that fingerprints passwords in form keys (see
	// FormKey); it stays with the ledger.
	Key(ctx context.Context) ([]byte, error)
}

// Interrupted is the Status of an entry whose process ended (killed,
// crashed, restarted) between its Reserve and its Resolve: its cause is
// CauseUnknown. A Ledger shared by processes records it when it finds such
// an entry; it counts toward the budget and blocks no form.
const Interrupted = "interrupted: the process ended before the logon's outcome was recorded"

// Attempt is one logon about to be sent.
type Attempt struct {
	Account string // account key: see AccountKey
	Form    string // form key: see FormKey (includes a password fingerprint)
	Typed   string // the form as typed, for humans
	At      time.Time
	// Seen is the account as the directory shows it right before this
	// attempt (nil: no directory). A fix made on the DC after a failure —
	// the password set again, the account unlocked or enabled — lifts that
	// failure's block of the form (it still counts toward the budget).
	Seen *AccountSeen
}

// AccountSeen is what the directory says of an account now.
type AccountSeen struct {
	// State is the account's cause now: CauseOK when it can log on.
	State scanwarden.Cause
	// PasswordLastSet is the DC's pwdLastSet (zero: unknown).
	PasswordLastSet time.Time
	// DCBudget is set when the budget the attempt is judged against is the
	// DC's (lockout threshold − badPwdCount − margin), which already counts
	// every failure the DC saw: a failure the DC fix lifted is then not
	// counted a second time.
	DCBudget bool
}

// lifts reports whether what the directory shows now undoes e, a definite
// failure: a wrong password is undone by a password set after it, a
// state of the account (locked, disabled, expired, must change, …) by the
// account no longer being in it.
func (s *AccountSeen) lifts(e *LedgerEntry) bool {
	if s == nil || !e.Definite() {
		return false
	}
	switch e.Cause {
	case scanwarden.CauseBadCredentials, scanwarden.CauseWrongUserFormat, scanwarden.CauseUnknownUser:
		return s.State == scanwarden.CauseOK && s.PasswordLastSet.After(e.At)
	}
	return s.State == scanwarden.CauseOK
}

// Outcome of an attempt.
type Outcome struct {
	Kind   OutcomeKind
	Cause  scanwarden.Cause // for Failed
	Status string           // NT status text, for Failed
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
	Cause   scanwarden.Cause // "" while pending
	Status  string
	// KnownGood is set on an interrupted entry whose form and password
	// had succeeded before it and not definitely failed since (see Ledger).
	KnownGood bool
}

// Pending reports whether e's logon is still in flight.
func (e *LedgerEntry) Pending() bool { return e.Cause == "" }

// definiteCauses are the server's answers to an AUTHENTICATE that judge the
// form, the password or the account: only these block a form.
var definiteCauses = map[scanwarden.Cause]bool{
	scanwarden.CauseBadCredentials: true, scanwarden.CauseWrongUserFormat: true, scanwarden.CauseAccountDisabled: true, scanwarden.CauseAccountLocked: true,
	scanwarden.CausePasswordExpired: true, scanwarden.CausePasswordMustChange: true, scanwarden.CauseAccountExpired: true,
	scanwarden.CauseWorkstationRestricted: true, scanwarden.CauseLogonHours: true, scanwarden.CauseUnknownUser: true, scanwarden.CauseGuestRefused: true,
}

// Definite reports whether e is a failure the server decided (see
// Ledger): not pending, not unknown, not interrupted.
func (e *LedgerEntry) Definite() bool { return definiteCauses[e.Cause] }

// Refusal says why no attempt may be made now.
type Refusal struct {
	Reason  string       // human sentence
	Last    *LedgerEntry // the last observed failure, if any
	RetryAt time.Time    // when an attempt may be made again
	// Pending is how many of the entries that spent the budget are logons
	// still in flight: when they resolve (a success clears the account),
	// the budget may be back before RetryAt.
	Pending int
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

// Judge applies the ledger rules (see Ledger) to the entries of one account
// within the window (window = a.At - since): every Ledger implementation's
// Reserve calls it inside its own transaction.
func Judge(entries []LedgerEntry, a Attempt, budget int, window time.Duration) *Refusal {
	var last, lastDone *LedgerEntry
	pending := 0
	for i := range entries {
		e := &entries[i]
		if last == nil || e.At.After(last.At) {
			last = e
		}
		if e.Pending() {
			pending++
		} else if lastDone == nil || e.At.After(lastDone.At) {
			lastDone = e
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Cause == scanwarden.CauseAccountLocked && !a.Seen.lifts(e) {
			return &Refusal{Reason: fmt.Sprintf("the account was seen locked out at %s; no logon is replayed until the window has passed", e.At.Format(time.TimeOnly)),
				Last: e, RetryAt: e.At.Add(window)}
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Form == a.Form && e.Definite() && !a.Seen.lifts(e) {
			return &Refusal{Reason: fmt.Sprintf("this user name form and password already failed at %s; it is not replayed again within %s", e.At.Format(time.TimeOnly), spell(window)),
				Last: e, RetryAt: e.At.Add(window)}
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Form == a.Form && e.Pending() && a.At.Sub(e.At) < pendingWait {
			// Its answer is due any moment and says whether this one may go:
			// wait for it (reserve does), but not longer than pendingWait.
			return &Refusal{Reason: fmt.Sprintf("the same user name form and password is being tried by another logon since %s; its answer is awaited", e.At.Format(time.TimeOnly)),
				Last: e, RetryAt: e.At.Add(pendingWait), Pending: pending}
		}
	}
	counted := len(entries)
	if known := countKnownGood(entries); known > 1 {
		counted -= known - 1
	}
	if a.Seen != nil && a.Seen.DCBudget {
		for i := range entries {
			if a.Seen.lifts(&entries[i]) {
				counted--
			}
		}
	}
	if counted >= budget {
		r := &Refusal{Last: lastDone, Pending: pending}
		if r.Last == nil {
			r.Last = last
		}
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
			if pending > 0 {
				r.Reason += fmt.Sprintf(" (%d of it by logons still in flight)", pending)
			}
			r.RetryAt = oldest.Add(window)
		}
		return r
	}
	return nil
}

// countKnownGood counts the interrupted entries of forms known good: they
// spend one slot of the budget between them (see Ledger).
func countKnownGood(entries []LedgerEntry) int {
	n := 0
	for i := range entries {
		if entries[i].KnownGood && entries[i].Status == Interrupted {
			n++
		}
	}
	return n
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

// pendingWait bounds how long a gate waits for logons in flight elsewhere
// when they alone keep the budget spent; pendingPoll is how often it asks
// again.
const (
	pendingWait = 10 * time.Second
	pendingPoll = 100 * time.Millisecond
)

// reserve asks l for an attempt at a (its At and Window from now) and,
// while the budget is spent only because other logons of the account are
// in flight (Refusal.Pending), waits for them up to pendingWait: a logon in
// flight elsewhere is never a failure, and once it succeeds the budget is
// back.
func reserve(ctx context.Context, l Ledger, a Attempt, now func() time.Time, window time.Duration, budget int) (int64, *Refusal, error) {
	start := time.Now()
	for {
		a.At = now()
		id, r, err := l.Reserve(ctx, a, a.At.Add(-window), budget)
		if err != nil || r == nil || r.Pending == 0 || time.Since(start) >= pendingWait {
			return id, r, err
		}
		t := time.NewTimer(pendingPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return id, r, nil
		case <-t.C:
		}
	}
}
