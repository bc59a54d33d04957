package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/scanwarden/scanwarden/internal/safefile"
)

// OpenReadOnly opens an existing database for reading only and creates or
// changes no file: no migration, no chmod, no WAL index of its own — so a
// root `scanwarden doctor` can read the daemon's database without leaving a
// root-owned file that the daemon's user could not open. While the daemon
// runs (a -wal file exists) it reads through the daemon's WAL index; when
// the database was closed cleanly it reads the file as immutable.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if sqliteHardening != nil {
		return nil, fmt.Errorf("open store %s: %w", path, sqliteHardening)
	}
	wal, err := checkReadOnly(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	if !wal {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "query_only(1)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &Store{db: db, path: path, now: time.Now, readOnly: true}, nil
}

// checkReadOnly opens the database and its side files below their
// folder's fd — no link followed, no FIFO waited on — and refuses any that
// is not a regular file with one name, before SQLite sees it (which then
// opens them through hardenedOpen: a name swapped since is refused there).
// wal: a -wal file is there (the daemon runs, or did not close cleanly).
func checkReadOnly(path string) (wal bool, err error) {
	d, err := safefile.OpenDir(filepath.Dir(path))
	if err != nil {
		return false, err
	}
	defer d.Close()
	for i, name := range []string{filepath.Base(path), filepath.Base(path) + "-wal", filepath.Base(path) + "-shm"} {
		f, _, err := d.OpenRegular(name, os.O_RDONLY, 0)
		if i > 0 && errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, err
		}
		f.Close()
		if i == 1 {
			wal = true
		}
	}
	return wal, nil
}
