package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/store"
)

// TestCommandsShareTheDataDir: with nothing set, serve names
// ./scanwarden-data, and once it exists every other command — registry,
// admin, secrets, check's ledger — uses it rather than the user's state dir;
// SCANWARDEN_STATE_DIR still names the data dir.
func TestCommandsShareTheDataDir(t *testing.T) {
	isolate(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Chdir(t.TempDir())
	cli := func(want int, args ...string) result {
		t.Helper()
		r := runCLI(t, nil, "", args...)
		if want >= 0 && r.code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		return r
	}

	if r := cli(exitOK, "serve", "--check-config"); !strings.Contains(r.stdout, "data_dir "+store.LocalDir+",") {
		t.Errorf("serve's default data dir: %s", r.stdout)
	}
	if err := os.Mkdir(store.LocalDir, 0o700); err != nil { // as serve makes it
		t.Fatal(err)
	}
	cli(exitOK, "device", "add", "mfp1")
	cli(exitOK, "destination", "add", "d1", "//fs1/scans", "--user", "u", "--no-password", "--device", "mfp1")
	cli(exitOK, "admin", "token", "create", "prom")
	if r := cli(exitOK, "destination", "list"); !strings.Contains(r.stdout, "d1") {
		t.Errorf("destination list:\n%s", r.stdout)
	}
	if r := cli(exitOK, "admin", "token", "list"); !strings.Contains(r.stdout, "prom") {
		t.Errorf("admin token list:\n%s", r.stdout)
	}
	cli(exitOK, "secrets", "rotate")
	if r := cli(-1, "check", "//127.0.0.1:1/scans", "--user", "a", "--no-password", "--no-write", "--max-failures", "0"); r.code == exitUsage {
		t.Errorf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{store.DefaultFile, "secret.key"} {
		if _, err := os.Stat(filepath.Join(store.LocalDir, f)); err != nil {
			t.Errorf("./%s: %v", store.LocalDir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".local")); err == nil {
		t.Error("a command used the user's state dir")
	}
	if r := cli(exitOK, "serve", "--check-config"); !strings.Contains(r.stdout, "data_dir "+store.LocalDir+",") {
		t.Errorf("serve's data dir: %s", r.stdout)
	}

	other := t.TempDir()
	t.Setenv(store.EnvStateDir, other)
	if r := cli(exitOK, "destination", "list"); !strings.Contains(r.stdout, "no destinations") {
		t.Errorf("SCANWARDEN_STATE_DIR not followed:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(other, store.DefaultFile)); err != nil {
		t.Error(err)
	}
}
