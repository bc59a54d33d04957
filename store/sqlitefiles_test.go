package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/attacker"
)

// TestSQLiteOpensRefuseSwaps: what closes the race between our checks and
// SQLite's own open by path. SQLite, opened straight on a name the daemon's
// user swapped after the check — a link of its own to a database of
// root's, a FIFO — refuses it in its open (hardenedOpen,
// hardenedReadlink) instead of following the link or waiting for a writer.
func TestSQLiteOpensRefuseSwaps(t *testing.T) {
	if sqliteHardening != nil {
		t.Fatal(sqliteHardening)
	}
	base := t.TempDir()
	rootDB := filepath.Join(base, "root.db") // root's own database
	st, err := Open(context.Background(), rootDB)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	data := filepath.Join(base, "data")
	os.Mkdir(data, 0o700)
	attacker.Own(t, data)
	link := filepath.Join(data, "link.db")
	attacker.Symlink(t, rootDB, link)
	fifo := filepath.Join(data, "fifo.db")
	attacker.Fifo(t, fifo)
	for name, dsn := range map[string]string{
		"a link of the daemon's, read-write": "file:" + link,
		"a link of the daemon's, read-only":  "file:" + link + "?mode=ro",
		"a FIFO, read-write":                 "file:" + fifo,
		"a FIFO, read-only":                  "file:" + fifo + "?mode=ro",
	} {
		done := make(chan error, 1)
		go func() {
			db, err := sql.Open("sqlite", dsn)
			if err == nil {
				var n int
				err = db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n)
				db.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: SQLite opened it", name)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: SQLite's open blocked", name)
			attacker.Unblock(fifo, 3*time.Second)
		}
	}
	// root's own link is followed (a data dir path through /var/run, say)
	own := filepath.Join(base, "own.db")
	os.Symlink(rootDB, own)
	db, _ := sql.Open("sqlite", "file:"+own+"?mode=ro")
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		t.Errorf("a link of root's own: %v", err)
	}
}
