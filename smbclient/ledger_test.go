package smbclient

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

func TestLedgerRules(t *testing.T) {
	ctx := context.Background()
	l := &MemoryLedger{}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	window := 30 * time.Minute
	key := []byte("k")
	acct := AccountKey("KYOLAB", "bob")
	form := func(u, pw string) string { return FormKey("", u, pw, key) }
	try := func(f string, at time.Time, budget int) (int64, *Refusal) {
		id, r, err := l.Reserve(ctx, Attempt{Account: acct, Form: f, Typed: f, At: at}, at.Add(-window), budget)
		if err != nil {
			t.Fatal(err)
		}
		return id, r
	}
	id, r := try(form("bob", "wrong"), now, 2)
	if r != nil {
		t.Fatalf("first attempt refused: %v", r.Reason)
	}
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseBadCredentials, Status: ntstatus.LogonFailure.String()})
	// The same form and password: never twice in a window.
	if _, r := try(form("bob", "wrong"), now.Add(time.Minute), 2); r == nil || r.Last == nil || r.Last.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("same failing form was not refused: %+v", r)
	}
	// A corrected password is a new attempt.
	id, r = try(form("bob", "wrong2"), now.Add(time.Minute), 2)
	if r != nil {
		t.Fatalf("new password refused: %v", r.Reason)
	}
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseBadCredentials})
	// Budget 2 spent.
	_, r = try(form("bob@x", "wrong3"), now.Add(2*time.Minute), 2)
	if r == nil || !strings.Contains(r.Reason, "budget") || !r.RetryAt.Equal(now.Add(window)) {
		t.Fatalf("budget not enforced: %+v", r)
	}
	// After the window the budget is back.
	id, r = try(form("bob@x", "wrong3"), now.Add(window+time.Minute), 2)
	if r != nil {
		t.Fatalf("refused after window: %v", r.Reason)
	}
	// A success clears the account.
	l.Resolve(ctx, id, Outcome{Kind: Succeeded})
	if _, r := try(form("bob", "wrong"), now.Add(window+2*time.Minute), 2); r != nil {
		t.Fatalf("ledger not cleared by success: %v", r.Reason)
	}
	// Budget 0 refuses everything, and a lockout blocks the window.
	if _, r := try(form("x", "y"), now, 0); r == nil {
		t.Fatal("budget 0 allowed an attempt")
	}
	l2 := &MemoryLedger{}
	id, _, _ = l2.Reserve(ctx, Attempt{Account: acct, Form: "a", At: now}, now.Add(-window), 5)
	l2.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseAccountLocked})
	if _, r, _ := l2.Reserve(ctx, Attempt{Account: acct, Form: "b", At: now.Add(time.Minute)}, now.Add(time.Minute-window), 5); r == nil || !strings.Contains(r.Reason, "locked") {
		t.Fatalf("lockout did not stop replays: %+v", r)
	}
	// A cancelled attempt does not count.
	l3 := &MemoryLedger{}
	id, _, _ = l3.Reserve(ctx, Attempt{Account: acct, Form: "a", At: now}, now.Add(-window), 1)
	l3.Resolve(ctx, id, Outcome{Kind: Cancelled})
	if _, r, _ := l3.Reserve(ctx, Attempt{Account: acct, Form: "a", At: now}, now.Add(-window), 1); r != nil {
		t.Fatalf("cancelled attempt counted: %v", r.Reason)
	}
}

func TestFormKeyHidesPassword(t *testing.T) {
	k := FormKey("KYOLAB", "alice", "Secret-Pass-1", []byte("key"))
	if strings.Contains(k, "Secret") || k == FormKey("KYOLAB", "alice", "Secret-Pass-2", []byte("key")) {
		t.Fatalf("form key %q leaks or does not tell passwords apart", k)
	}
}

// Issue 18: only a definite failure blocks its form and password; a logon in
// flight or one whose outcome is unknown counts toward the budget and
// blocks nothing; a fix seen in the directory lifts a definite failure's
// block, never the budget.
func TestLedgerOnlyDefiniteFailuresBlock(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	w := 30 * time.Minute
	acct := AccountKey("KYOLAB", "walt")
	try := func(l *MemoryLedger, f string, at time.Time, budget int, seen *AccountSeen) (int64, *Refusal) {
		t.Helper()
		id, r, err := l.Reserve(ctx, Attempt{Account: acct, Form: f, Typed: f, At: at, Seen: seen}, at.Add(-w), budget)
		if err != nil {
			t.Fatal(err)
		}
		return id, r
	}
	// In flight: the same form waits up to 10 s for its answer (a wait,
	// not a failure), then may go; the budget counts it.
	l := &MemoryLedger{}
	try(l, "f", now, 3, nil)
	if _, r := try(l, "f", now.Add(time.Second), 3, nil); r == nil || r.Pending != 1 || r.Last == nil || r.Last.Cause != "" {
		t.Fatalf("the same form's logon in flight is not awaited: %+v", r)
	}
	if _, r := try(l, "f", now.Add(pendingWait), 3, nil); r != nil {
		t.Fatalf("a logon in flight blocked its form: %s", r.Reason)
	}
	if _, r := try(l, "g", now.Add(2*time.Second), 2, nil); r == nil || r.Pending != 2 || !strings.Contains(r.Reason, "in flight") {
		t.Fatalf("logons in flight not counted toward the budget: %+v", r)
	}
	// Unknown outcome (no answer after the AUTHENTICATE left): counts, blocks nothing.
	l = &MemoryLedger{}
	id, _ := try(l, "f", now, 2, nil)
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseTimeout})
	id, r := try(l, "f", now.Add(time.Second), 2, nil)
	if r != nil {
		t.Fatalf("an unknown outcome blocked its form: %s", r.Reason)
	}
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseUnknown, Status: Interrupted})
	if _, r := try(l, "f", now.Add(2*time.Second), 2, nil); r == nil || !strings.Contains(r.Reason, "budget") {
		t.Fatalf("unknown outcomes not counted toward the budget: %+v", r)
	}
	// Definite: blocks its form, until the directory shows the password set after it.
	l = &MemoryLedger{}
	id, _ = try(l, "f", now, 3, nil)
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseBadCredentials})
	if _, r := try(l, "f", now.Add(time.Minute), 3, nil); r == nil || r.Last == nil || r.Last.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("a definite failure did not block its form: %+v", r)
	}
	before := &AccountSeen{State: scanwarden.CauseOK, PasswordLastSet: now.Add(-time.Hour)}
	if _, r := try(l, "f", now.Add(time.Minute), 3, before); r == nil {
		t.Fatal("a password set before the failure lifted its block")
	}
	expired := &AccountSeen{State: scanwarden.CausePasswordExpired, PasswordLastSet: now.Add(time.Minute)}
	if _, r := try(l, "f", now.Add(2*time.Minute), 3, expired); r == nil {
		t.Fatal("an account that cannot log on lifted the block")
	}
	set := &AccountSeen{State: scanwarden.CauseOK, PasswordLastSet: now.Add(time.Minute)}
	if _, r := try(l, "f", now.Add(2*time.Minute), 2, set); r != nil {
		t.Fatalf("the password set on the DC after the failure did not lift the block: %s", r.Reason)
	}
	if _, r := try(l, "f", now.Add(3*time.Minute), 2, set); r == nil || !strings.Contains(r.Reason, "budget") {
		t.Fatalf("the lifted failure no longer counts toward the budget: %+v", r)
	}
	// Against the DC's own budget (threshold − badPwdCount − margin, which
	// counts the failure already), a lifted failure is not counted twice.
	l = &MemoryLedger{}
	id, _ = try(l, "f", now, 1, nil)
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseBadCredentials})
	dc := &AccountSeen{State: scanwarden.CauseOK, PasswordLastSet: now.Add(time.Minute), DCBudget: true}
	if _, r := try(l, "f", now.Add(2*time.Minute), 1, dc); r != nil {
		t.Fatalf("a lifted failure counted twice against the DC's budget: %s", r.Reason)
	}
	if _, r := try(l, "g", now.Add(3*time.Minute), 1, &AccountSeen{State: scanwarden.CauseOK, DCBudget: true}); r == nil {
		t.Fatal("a failure not lifted went uncounted")
	}
	// A lockout blocks everything until the directory shows the account unlocked.
	l = &MemoryLedger{}
	id, _ = try(l, "f", now, 3, nil)
	l.Resolve(ctx, id, Outcome{Kind: Failed, Cause: scanwarden.CauseAccountLocked})
	if _, r := try(l, "g", now.Add(time.Minute), 3, &AccountSeen{State: scanwarden.CauseAccountLocked}); r == nil || !strings.Contains(r.Reason, "locked") {
		t.Fatalf("a lockout still seen did not block: %+v", r)
	}
	if _, r := try(l, "f", now.Add(time.Minute), 3, &AccountSeen{State: scanwarden.CauseOK}); r != nil {
		t.Fatalf("an unlocked account is still blocked: %s", r.Reason)
	}
}
