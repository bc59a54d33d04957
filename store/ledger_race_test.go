package store

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/smbclient"
)

// ledgerHelperEnv makes the test binary a second process holding one
// pending attempt (see runLedgerHelper).
const ledgerHelperEnv = "SCANWARDEN_TEST_LEDGER_HELPER"

func TestMain(m *testing.M) {
	if db := os.Getenv(ledgerHelperEnv); db != "" {
		os.Exit(runLedgerHelper(db))
	}
	os.Exit(m.Run())
}

// runLedgerHelper is the other process of the budget race: it reserves an
// attempt for kyolab\dave (its logon is "in flight"), says "reserved",
// waits for a line on stdin, then records the logon as failed.
func runLedgerHelper(db string) int {
	ctx := context.Background()
	s, err := Open(ctx, db)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	defer s.Close()
	now := time.Now()
	a := smbclient.Attempt{Account: `kyolab\dave`, Form: "helper-form", Typed: "dave", At: now}
	id, r, err := s.Ledger().Reserve(ctx, a, now.Add(-30*time.Minute), 2)
	if err != nil || r != nil || id == 0 {
		fmt.Println("error", err, r)
		return 1
	}
	fmt.Println("reserved")
	bufio.NewReader(os.Stdin).ReadString('\n')
	if err := s.Ledger().Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials, Status: "0xC000006D"}); err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("resolved")
	return 0
}

// The budget race of issue 8, with two processes on one state file: while
// process B's logon is in flight (reserved, not resolved), process A's
// logon of the same account succeeds; B's then fails. A success once
// cleared B's pending row, B's failure was recorded nowhere, and A went on
// to fail twice more: 3 failures against a budget of 2. Now A may fail at
// most once more.
func TestLedgerBudgetRaceTwoProcesses(t *testing.T) {
	ctx := context.Background()
	s, db := openTemp(t)
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
	defer helper.Process.Kill()
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			if lines.Scan() {
				got <- lines.Text()
			}
			close(got)
		}()
		select {
		case l := <-got:
			if l != want {
				t.Fatalf("helper said %q, want %q", l, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("helper silent for 10 s, want %q", want)
		}
	}
	expect("reserved")

	l := s.Ledger()
	window := 30 * time.Minute
	now := time.Now()
	ok := smbclient.Attempt{Account: `kyolab\dave`, Form: "right-password", Typed: "dave", At: now}
	id, r, err := l.Reserve(ctx, ok, now.Add(-window), 2)
	if err != nil || r != nil {
		t.Fatalf("A's logon: %v %v", r, err)
	}
	if err := l.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Succeeded}); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, "go")
	expect("resolved")
	if err := helper.Wait(); err != nil {
		t.Fatal(err)
	}

	sent := 1 // B's failed logon
	for i := range 4 {
		at := now.Add(time.Duration(i+1) * time.Second)
		a := smbclient.Attempt{Account: `kyolab\dave`, Form: fmt.Sprintf("wrong-%d", i), Typed: "dave", At: at}
		id, r, err := l.Reserve(ctx, a, at.Add(-window), 2)
		if err != nil {
			t.Fatal(err)
		}
		if r != nil {
			continue
		}
		sent++
		l.Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials})
	}
	if sent > 2 {
		t.Fatalf("%d failed logons in the window against a budget of 2", sent)
	}
}

// Rows go when their window ends, and a success clears only the resolved
// failures before it.
func TestLedgerWindowAndSuccess(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	l := s.Ledger()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	w := 30 * time.Minute
	reserve := func(form string, at time.Time) int64 {
		t.Helper()
		id, r, err := l.Reserve(ctx, smbclient.Attempt{Account: `kyolab\erin`, Form: form, At: at}, at.Add(-w), 5)
		if err != nil || r != nil {
			t.Fatalf("%s: %v %v", form, r, err)
		}
		return id
	}
	rows := func() []string {
		t.Helper()
		rs, err := s.db.QueryContext(ctx, "SELECT form FROM logon_attempts ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []string
		for rs.Next() {
			var f string
			rs.Scan(&f)
			out = append(out, f)
		}
		return out
	}
	f1 := reserve("f1", now)
	l.Resolve(ctx, f1, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials})
	reserve("pending", now.Add(time.Minute)) // another logon in flight
	ok := reserve("ok", now.Add(2*time.Minute))
	l.Resolve(ctx, ok, smbclient.Outcome{Kind: smbclient.Succeeded})
	if got := strings.Join(rows(), ","); got != "pending" {
		t.Errorf("rows after the success: %s, want only the pending attempt", got)
	}
	// After its window the pending row goes at the next reservation.
	reserve("later", now.Add(time.Minute+w+time.Second))
	if got := strings.Join(rows(), ","); got != "later" {
		t.Errorf("rows after the window: %s", got)
	}
}

// What is on disk does not let anyone test a password guess offline: the
// fingerprint key is derived from the key file, which is not in the state
// database, and the key that once lived in it is removed. A dictionary of
// 1,000 guesses (the real password among them) run with every value the
// database holds as the key finds nothing.
func TestLedgerFingerprintNotTestableFromDatabase(t *testing.T) {
	ctx := context.Background()
	s, db := openTemp(t)
	// An older store kept its key in settings.
	if _, err := s.db.ExecContext(ctx, "INSERT INTO settings(key, value) VALUES ('ledger_key', ?)", []byte("0123456789abcdef0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UnlockKey(ctx, filepath.Join(t.TempDir(), seal.FileName)); err != nil {
		t.Fatal(err)
	}
	key, err := s.Ledger().Key(ctx)
	if err != nil {
		t.Fatal(err)
	}
	form := smbclient.Form{Domain: "KYOLAB", User: "frank", Typed: `KYOLAB\frank`}
	const password = "Winter2026!"
	now := time.Now()
	id, _, err := s.Ledger().Reserve(ctx, smbclient.Attempt{Account: `kyolab\frank`, Form: smbclient.FormKey(form.Domain, form.User, password, key), At: now}, now.Add(-time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Ledger().Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials})
	s.Close()

	// The attacker's view: the database alone.
	raw, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var stored string
	if err := raw.QueryRow("SELECT form FROM logon_attempts").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	var candidates [][]byte
	rs, err := raw.Query("SELECT key, value FROM settings")
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var k string
		var v []byte
		rs.Scan(&k, &v)
		if k == "ledger_key" {
			t.Error("the old ledger key is still in the database")
		}
		candidates = append(candidates, v)
	}
	rs.Close()
	guesses := []string{password}
	for i := range 999 {
		guesses = append(guesses, fmt.Sprintf("Winter%d!", 1000+i))
	}
	for _, k := range candidates {
		for _, g := range guesses {
			if smbclient.FormKey(form.Domain, form.User, g, k) == stored {
				t.Fatalf("the password %q was found offline from the database", g)
			}
		}
	}
	b, _ := os.ReadFile(db)
	wal, _ := os.ReadFile(db + "-wal")
	if strings.Contains(string(b)+string(wal), string(key)) {
		t.Error("the fingerprint key is in the database file")
	}
}
