package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestAttackDatabaseSideFileSymlinks: root's commands (doctor, admin
// setup-link, secrets rotate, receiver status — run with sudo) open the
// daemon's database in its data dir, which the daemon's user writes. The
// daemon could put its -wal or -shm as a symbolic link to a file of root's:
// opening the store made that file 0600 (tighten followed the link: a
// 0644 /etc/passwd so locked every other user out) and SQLite then used it
// as its write-ahead log. A side file that is a symbolic link is now
// refused, naming it, and the file it points to is left alone.
func TestAttackDatabaseSideFileSymlinks(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "a file of root's the daemon's link points at: run as root")
	}
	for _, side := range []string{"-wal", "-shm"} {
		t.Run(side, func(t *testing.T) {
			dir := t.TempDir()
			data := filepath.Join(dir, "data")
			st, err := OpenDir(context.Background(), data) // the daemon's database
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			target := filepath.Join(dir, "passwd") // stands for /etc/passwd
			body := []byte("root:x:0:0:root:/root:/bin/bash\n")
			os.WriteFile(target, body, 0o644)
			os.Chmod(target, 0o644)
			side := filepath.Join(data, DefaultFile+side)
			os.Remove(side)
			if err := os.Symlink(target, side); err != nil {
				t.Fatal(err)
			}
			st, err = OpenDir(context.Background(), data) // root's command
			if err == nil {
				st.Settings().SetSettings(context.Background(), []config.Saved{{Section: "checks", Key: "interval", Value: "5m"}})
				st.Close()
				t.Errorf("a %s that is a symbolic link was used", side)
			}
			fi, _ := os.Stat(target)
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("the file %s links to was made %04o", side, fi.Mode().Perm())
			}
			if b, _ := os.ReadFile(target); !bytes.Equal(b, body) {
				t.Errorf("the file %s links to was written: %q", side, b)
			}
		})
	}
}
