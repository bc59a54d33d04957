package receiver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// Issue 18's soak without a crash: serve checks a destination while the
// receiver delivers to it, one data dir (two store handles, as the two
// processes have). A logon in flight in one was taken by the other as
// "this user name form and password already failed … (unknown)" and the
// delivery (or the check) was refused. Now neither is ever refused: each
// check passes and each delivery lands. SCANWARDEN_RACE_SECONDS sets how
// long they race (default 15 s; the hour is a by-hand run).
func TestLabChecksRaceDeliveries(t *testing.T) {
	lab := testlab.Require(t)
	secs := 15
	if v, err := strconv.Atoi(os.Getenv("SCANWARDEN_RACE_SECONDS")); err == nil && v > 0 {
		secs = v
	}
	ctx := context.Background()
	sub := "rx-race-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	local := filepath.Join(lab.Dir, "dc", "shares", "scans", sub)
	if err := os.Mkdir(local, 0o777); err != nil {
		testlab.Missing(t, fmt.Sprintf("lab share folder not writable here: %v", err))
	}
	os.Chmod(local, 0o777)
	t.Cleanup(func() { os.RemoveAll(local) })
	target := scanwarden.Target{Host: lab.DCIP, Share: "scans", Path: sub, User: lab.Domain + `\alice`,
		Password: scanwardenSecret(lab.Password), Workstation: "MFP01"}

	dir := t.TempDir()
	open := func() *store.Store {
		st, err := store.OpenDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if _, err := st.UnlockKey(ctx, filepath.Join(dir, "secret.key")); err != nil {
			t.Fatal(err)
		}
		return st
	}
	serve, recv := open(), open()
	window := 30 * time.Minute

	// They race for secs, and on a loaded machine on until each side has
	// had 10 rounds (at most 2 minutes).
	end := time.Now().Add(time.Duration(secs) * time.Second)
	hardEnd := end.Add(2 * time.Minute)
	var checks, checkFails, deliveries, refusals atomic.Int64
	more := func(rounds *atomic.Int64) bool {
		now := time.Now()
		return now.Before(end) || rounds.Load() < 10 && now.Before(hardEnd)
	}
	var mu sync.Mutex
	var firstRefusal string
	note := func(s string) {
		mu.Lock()
		if firstRefusal == "" {
			firstRefusal = s
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range 2 { // the scheduler may run checks of one destination back to back
		wg.Add(1)
		go func() {
			defer wg.Done()
			for more(&checks) {
				rep := smbcheck.Run(ctx, target, smbcheck.Options{Ledger: serve.Ledger(), MaxFailures: 2, Window: window,
					StepTimeout: 10 * time.Second, NoWrite: true})
				checks.Add(1)
				if !rep.OK() {
					checkFails.Add(1)
					note(fmt.Sprintf("check: %s: %s", rep.Verdict.Cause, rep.Verdict.Summary))
				}
			}
		}()
	}
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			remote := receiver.SMBRemote{Ledger: recv.Ledger(), MaxFailures: 2, Window: window, Timeout: 10 * time.Second}
			for i := 0; more(&deliveries); i++ {
				f, err := remote.Open(ctx, target)
				if err != nil {
					var se *smbclient.Error
					if errors.As(err, &se) && se.Refusal != nil {
						refusals.Add(1)
					}
					note("delivery: " + err.Error())
					continue
				}
				name := fmt.Sprintf("w%d-%05d.pdf", w, i)
				if file, err := f.Create(ctx, name); err != nil {
					note("delivery create: " + err.Error())
				} else {
					file.Write([]byte("%PDF-1.4\n%%EOF\n"))
					file.Close()
					deliveries.Add(1)
				}
				f.Close()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d s (at least): %d checks (%d not ok), %d deliveries, %d deliveries refused by the ledger", secs, checks.Load(), checkFails.Load(), deliveries.Load(), refusals.Load())
	if checkFails.Load() != 0 || refusals.Load() != 0 || firstRefusal != "" {
		t.Fatalf("a logon in flight was taken for a failure; first: %s", firstRefusal)
	}
	if checks.Load() < 10 || deliveries.Load() < 10 {
		t.Fatalf("too few rounds to race: %d checks, %d deliveries", checks.Load(), deliveries.Load())
	}
}
