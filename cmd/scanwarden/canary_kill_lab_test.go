package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabCanaryKill9: a check killed with SIGKILL while its canary exists
// leaves nothing behind: the canary was created delete-on-close, so the
// server removes it as soon as the dead check's connection goes, and the
// next check of the same folder forgets the name its journal still holds.
func TestLabCanaryKill9(t *testing.T) {
	lab := testlab.Require(t)
	state := t.TempDir()
	journal := filepath.Join(state, "canaries")
	args := []string{"-test.run=^$", "--", "check", "//" + lab.DCHost + "/scans", "--user", lab.Domain + `\alice`, "--state-dir", state}
	env := append(os.Environ(), mainEnv+"=1", passwordEnv+"="+lab.Password)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "alice", Password: lab.Password, Domain: lab.Domain}}).Dial(ctx, lab.DCIP+":445")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Logoff()
	sh, err := s.Mount(`\\` + lab.DCIP + `\scans`)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	var name string
	for try := 0; try < 30 && name == ""; try++ {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the name in the journal, then for the file on the
		// share, and kill the check while the canary exists.
		deadline := time.Now().Add(15 * time.Second)
		recorded := ""
		for time.Now().Before(deadline) && name == "" {
			if recorded == "" {
				if es, _ := os.ReadDir(journal); len(es) > 0 {
					b, _ := os.ReadFile(filepath.Join(journal, es[0].Name()))
					_, recorded, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
				}
				time.Sleep(200 * time.Microsecond)
				continue
			}
			if _, err := sh.Stat(recorded); err == nil {
				cmd.Process.Kill()
				name = recorded
			} else if cmd.ProcessState != nil {
				break
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		if name == "" && recorded != "" {
			os.RemoveAll(journal) // this run finished first: its canary is gone
		}
	}
	if name == "" {
		t.Fatal("no check of 30 was caught while its canary existed: the check never left its canary on the share long enough to be seen, or never wrote one")
	}
	t.Logf("killed while %s existed", name)
	gone := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !gone; time.Sleep(10 * time.Millisecond) {
		_, err := sh.Stat(name)
		gone = errors.Is(err, os.ErrNotExist)
	}
	if !gone {
		sh.Remove(name)
		t.Fatalf("the killed check's canary %s outlived its connection", name)
	}

	// The next check of the folder finds it gone and forgets the name.
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verdict: ok") {
		t.Fatalf("second check: %v\n%s", err, out)
	}
	if es, _ := os.ReadDir(journal); len(es) != 0 {
		t.Errorf("journal not empty after the next check: %d entries", len(es))
	}
}
