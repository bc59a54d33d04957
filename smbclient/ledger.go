// Package smbclient is the SMB connection that the forwarder and the
// checks share, and the failed-logon ledger that gates every logon either
// makes: no logon that could fail leaves once an account's budget is spent.
package smbclient

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
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

// FormKey identifies a user name form (its NTLM Domain and User fields, or
// a Kerberos realm and user) together with a fingerprint of the password,
// so that a corrected password on the MFP counts as a new attempt. The
// fingerprint is an HMAC under key: it cannot be reversed without the key,
// which stays with the ledger.
func FormKey(domain, user, password string, key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(password))
	return fmt.Sprintf("%s|%s|%s", strings.ToLower(domain), strings.ToLower(user), hex.EncodeToString(m.Sum(nil))[:16])
}
