package store

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/testlab"
)

// nobody is the uid the racing "other local user" runs as.
const nobody = 65534

// openTree returns a directory every user can reach (t.TempDir is 0700),
// as /var/lib is.
func openTree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	for d := base; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(d) == os.TempDir() {
			break
		}
	}
	return base
}

// A state directory made 0755 (as systemd's StateDirectory= makes it) and a
// local user racing to open the database while it is created: the racer,
// another user reading the file in a loop from before Open until after it,
// never gets a handle (it once did 10 times out of 10). Needs root, to run
// the racer as nobody.
func TestRacingOpenByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "needs root to run the racing reader as another user")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		testlab.Missing(t, "needs bash for the racing reader")
	}
	for round := range 10 {
		dir := filepath.Join(openTree(t), "state")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, DefaultFile)
		// The racer: a bash loop of builtins as nobody, bounded to 3 s,
		// printing GOT for each successful open of the database, its WAL or
		// the key file.
		racer := exec.Command("bash", "-c", `while (( SECONDS < 3 )); do
			for f in "$1" "$1-wal" "$1-shm" "$2"; do { exec 3<"$f"; } 2>/dev/null && { echo GOT "$f"; exec 3<&-; }; done
		done`, "racer", db, filepath.Join(dir, seal.FileName))
		racer.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var out strings.Builder
		racer.Stdout = &out
		if err := racer.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the racer is looping
		s, err := Open(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.UnlockKey(context.Background(), filepath.Join(dir, seal.FileName)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		racer.Process.Kill()
		racer.Wait()
		if out.Len() > 0 {
			t.Fatalf("round %d: another user opened the store:\n%s", round, out.String())
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("round %d: state dir %v %v, want repaired to 0700", round, fi, err)
		}
		if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("round %d: database %v %v, want 0600", round, fi, err)
		}
	}
}

// A state directory other users can enter that is not ours is refused
// with an error that names it and says what to do; nothing is created in
// it. Ours is repaired.
func TestStateDirPermissions(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "needs root to give the directory to another user")
	}
	dir := filepath.Join(openTree(t), "theirs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	_, err := OpenDir(context.Background(), dir)
	var pe *PermError
	if !errors.As(err, &pe) || !errors.Is(err, ErrStateDirOpen) || pe.Path != dir || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("err = %v, want a *PermError naming %s", err, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, DefaultFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a database was created in a refused directory: %v", err)
	}

	// Ours with a loose database file (an older scanwarden): both repaired.
	mine := filepath.Join(openTree(t), "mine")
	if err := os.Mkdir(mine, 0o750); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(mine, DefaultFile)
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(db, 0o644)
	s, err := Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for p, want := range map[string]os.FileMode{mine: 0o700, db: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want %04o", p, fi, want)
		}
	}
}

// Without root: a fresh state directory and database are created 0700 and
// 0600 whatever the umask.
func TestStoreCreatedPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "a", "state")
	s, err := OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, DefaultFile): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want %04o", p, fi, want)
		}
	}
}
