package store

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
)

// startLedgerHelper runs runLedgerHelper (a second process whose logon of
// kyolab\dave, form "helper-form", is in flight) on db and returns once it
// has reserved.
func startLedgerHelper(t *testing.T, db string) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), ledgerHelperEnv+"="+db)
	stdin, err := helper.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	got := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(stdout).ReadString('\n')
		got <- strings.TrimSpace(l)
	}()
	select {
	case l := <-got:
		if l != "reserved" {
			t.Fatalf("helper said %q, want reserved", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("helper silent for 10 s")
	}
	return helper, stdin
}

// A process killed (SIGKILL) between its Reserve and its Resolve: the next
// logon of the same form and password is sent (issue 18: it was refused for
// 30 minutes as "already failed … (unknown)"), the interrupted logon counts
// as one failure toward the budget, and a success clears it.
func TestLedgerKilledProcessCostsOneSlot(t *testing.T) {
	ctx := context.Background()
	s, db := openTemp(t)
	helper, _ := startLedgerHelper(t, db)
	helper.Process.Kill()
	helper.Wait()

	l := s.Ledger()
	w := 30 * time.Minute
	now := time.Now()
	same := smbclient.Attempt{Account: `kyolab\dave`, Form: "helper-form", Typed: "dave", At: now}
	id, r, err := l.Reserve(ctx, same, now.Add(-w), 2)
	if err != nil || r != nil {
		t.Fatalf("the same form after the kill: refused %+v (%v)", r, err)
	}
	var cause, status string
	s.db.QueryRow("SELECT cause, status FROM logon_attempts WHERE form = 'helper-form' AND id != ?", id).Scan(&cause, &status)
	if cause != string(scanwarden.CauseUnknown) || status != smbclient.Interrupted {
		t.Errorf("the killed process's row: cause %q status %q, want unknown/interrupted", cause, status)
	}
	// The interrupted logon and this one (in flight) spend the budget of 2.
	other := smbclient.Attempt{Account: `kyolab\dave`, Form: "other", At: now.Add(time.Second)}
	if _, r, _ := l.Reserve(ctx, other, other.At.Add(-w), 2); r == nil || !strings.Contains(r.Reason, "budget") {
		t.Fatalf("the interrupted logon did not count toward the budget: %+v", r)
	}
	// A success clears the interrupted row too.
	if err := l.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Succeeded}); err != nil {
		t.Fatal(err)
	}
	var n int
	s.db.QueryRow("SELECT count(*) FROM logon_attempts").Scan(&n)
	if n != 0 {
		t.Errorf("%d rows left after the success, want 0", n)
	}
}

// A logon in flight in another process (live) is never a failure: the same
// form is sent meanwhile (issue 18's soak: 13 deliveries refused as
// "already failed" by a check's logon still pending), it is not marked
// interrupted, it counts toward the budget, and a success here does not
// clear it (it may still fail).
func TestLedgerInFlightElsewhereIsNoFailure(t *testing.T) {
	ctx := context.Background()
	s, db := openTemp(t)
	_, stdin := startLedgerHelper(t, db)
	l := s.Ledger()
	w := 30 * time.Minute
	now := time.Now()
	same := smbclient.Attempt{Account: `kyolab\dave`, Form: "helper-form", Typed: "dave", At: now}
	// Its answer is awaited for a few seconds (a wait, not a failure) …
	if _, r, err := l.Reserve(ctx, same, now.Add(-w), 3); err != nil || r == nil || r.Pending != 1 || r.Last == nil || r.Last.Cause != "" {
		t.Fatalf("the same form's logon in flight elsewhere is not awaited: %+v (%v)", r, err)
	}
	// … then the same form may go.
	same.At = now.Add(11 * time.Second)
	id, r, err := l.Reserve(ctx, same, same.At.Add(-w), 3)
	if err != nil || r != nil {
		t.Fatalf("the same form while the other process's logon is in flight: refused %+v (%v)", r, err)
	}
	var pending int
	s.db.QueryRow("SELECT count(*) FROM logon_attempts WHERE cause = ''").Scan(&pending)
	if pending != 2 {
		t.Fatalf("%d pending rows, want 2 (the live process's row was resolved)", pending)
	}
	two := smbclient.Attempt{Account: `kyolab\dave`, Form: "two", At: now.Add(12 * time.Second)}
	if _, r, _ := l.Reserve(ctx, two, two.At.Add(-w), 2); r == nil || r.Pending != 2 {
		t.Fatalf("logons in flight did not count toward the budget: %+v", r)
	}
	l.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Succeeded})
	s.db.QueryRow("SELECT count(*) FROM logon_attempts WHERE cause = ''").Scan(&pending)
	if pending != 1 {
		t.Fatalf("%d pending rows after the success, want the other process's", pending)
	}
	fmt.Fprintln(stdin, "go")
}

// Crashes in a row during logons of a form and password that had succeeded
// cost one slot between them (issue 18: two kills during deliveries' logons
// within the window spent a budget of 2, and every held scan then waited 30
// minutes although the password was right); crashes during logons of a form
// never seen to succeed each still cost one, and a definite failure of the
// form makes it unknown again.
func TestLedgerCrashesOfAKnownGoodFormCostOneSlot(t *testing.T) {
	ctx := context.Background()
	s, db := openTemp(t)
	l := s.Ledger()
	w := 30 * time.Minute
	attempt := func(form string) smbclient.Attempt {
		now := time.Now()
		return smbclient.Attempt{Account: `kyolab\dave`, Form: form, Typed: "dave", At: now}
	}
	kill := func() {
		helper, _ := startLedgerHelper(t, db)
		helper.Process.Kill()
		helper.Wait()
	}
	interrupted := func() (n int) {
		s.db.QueryRow("SELECT count(*) FROM logon_attempts WHERE status = ?", smbclient.Interrupted).Scan(&n)
		return n
	}

	// Never succeeded: two crashes spend the budget of 2.
	kill()
	kill()
	if _, r, _ := l.Reserve(ctx, attempt("helper-form"), time.Now().Add(-w), 2); r == nil || !strings.Contains(r.Reason, "budget") {
		t.Fatalf("two crashes of a form never seen to succeed did not spend a budget of 2: %+v", r)
	}
	if n := interrupted(); n != 2 {
		t.Fatalf("%d interrupted rows, want 2", n)
	}

	// helper-form succeeds (it clears the account) …
	id, r, err := l.Reserve(ctx, attempt("helper-form"), time.Now().Add(-w), 3)
	if err != nil || r != nil {
		t.Fatalf("reserve: %+v %v", r, err)
	}
	if err := l.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Succeeded}); err != nil {
		t.Fatal(err)
	}
	// … then three crashes during its logons: one slot between them.
	kill()
	kill()
	kill()
	id, r, err = l.Reserve(ctx, attempt("helper-form"), time.Now().Add(-w), 2)
	if err != nil || r != nil {
		t.Fatalf("after three crashes of a known-good form: refused %+v (%v)", r, err)
	}
	if n := interrupted(); n != 3 {
		t.Fatalf("%d interrupted rows, want 3 (they still count, together as one)", n)
	}
	// With this logon in flight, the budget of 2 is spent.
	if _, r, _ := l.Reserve(ctx, attempt("other"), time.Now().Add(-w), 2); r == nil || !strings.Contains(r.Reason, "budget") {
		t.Fatalf("the known-good crashes cost nothing: %+v", r)
	}
	// The server now refuses the password: the form is no longer known good,
	// and a crash during its next logon costs a slot of its own.
	if err := l.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials, Status: "0xC000006D"}); err != nil {
		t.Fatal(err)
	}
	var good int
	s.db.QueryRow("SELECT count(*) FROM logon_good").Scan(&good)
	if good != 0 {
		t.Fatalf("%d known-good forms after the definite failure, want 0", good)
	}
	if _, r, _ := l.Reserve(ctx, attempt("helper-form"), time.Now().Add(-w), 5); r == nil || !strings.Contains(r.Reason, "already failed") {
		t.Fatalf("the form the server refused is not blocked: %+v", r)
	}
}
