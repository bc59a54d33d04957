package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/attacker"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/store"
)

// TestAttackerChild is the daemon's user's swapping process
// (attacker.Swap); a no-op as a test.
func TestAttackerChild(t *testing.T) { attacker.Child() }

// daemonData is an installed-shape data dir: the daemon's database (made,
// then given to the daemon's user with its folder) and the sealing key
// outside it, root's (as /etc/scanwarden/secret.key).
func daemonData(t *testing.T) (data, key string) {
	t.Helper()
	isolate(t)
	base := t.TempDir()
	data = filepath.Join(base, "data")
	key = filepath.Join(base, "secret.key")
	if _, err := seal.Create(key); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenUnlocked(context.Background(), data, key, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	attacker.Own(t, data)
	return data, key
}

// TestAttackChmodRaceBesideDatabase: root's commands opened the daemon's
// database after checking its -wal, -shm and the file with Lstat, then
// tighten() did Stat + Chmod by path. The daemon's user swapping a link to
// a file of root's in and out of scanwarden.db-shm (renameat2
// RENAME_EXCHANGE in a loop) had a loop of root's `destination list` /
// `receiver list` / `secrets rotate` chmod root's file 0600 within seconds
// (/etc/passwd at 0600 locks every other user out). Now no root command
// changes the mode of a file it does not own, every file is judged and
// changed on its descriptor, and SQLite's own opens refuse a link.
func TestAttackChmodRaceBesideDatabase(t *testing.T) {
	data, key := daemonData(t)
	base := filepath.Dir(data)
	target := filepath.Join(base, "passwd") // root's, stands for /etc/passwd
	body := []byte("root:x:0:0:root:/root:/bin/bash\n")
	os.WriteFile(target, body, 0o644)
	os.Chmod(target, 0o644)
	shm := filepath.Join(data, store.DefaultFile+"-shm")
	if _, err := os.Lstat(shm); err != nil {
		os.WriteFile(shm, nil, 0o600)
	}
	attacker.Own(t, data)
	stop := attacker.Swap(t, shm, target, 30*time.Second, 50_000_000)
	cmds := [][]string{
		{"destination", "list", "--data-dir", data, "--key-file", key},
		{"receiver", "list", "--data-dir", data},
		{"secrets", "rotate", "--data-dir", data, "--key-file", key},
	}
	runs, refused := 0, 0
	for end := time.Now().Add(12 * time.Second); time.Now().Before(end) && runs < 600; runs++ {
		var out, errb bytes.Buffer
		if code := run(context.Background(), cmds[runs%len(cmds)], strings.NewReader(""), &out, &errb); code != 0 {
			refused++
			if refused < 4 {
				t.Logf("%v: %s", cmds[runs%len(cmds)][:2], errb.String())
			}
		}
		if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
			break
		}
	}
	swaps := stop()
	if swaps == 0 {
		t.Fatal("the daemon's user made no exchange")
	}
	t.Logf("%d root commands (%d refused) against %d exchanges", runs, refused, swaps)
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("root's file behind the swapped link was made %v (%v)", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); !bytes.Equal(b, body) {
		t.Errorf("root's file behind the swapped link was written: %q", b)
	}
}
