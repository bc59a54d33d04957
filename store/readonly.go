package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"
)

// OpenReadOnly opens an existing database for reading only and creates or
// changes no file: no migration, no chmod, no WAL index of its own — so a
// root `scanwarden doctor` can read the daemon's database without leaving a
// root-owned file that the daemon's user could not open. While the daemon
// runs (a -wal file exists) it reads through the daemon's WAL index; when
// the database was closed cleanly it reads the file as immutable.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	if _, err := os.Stat(path + "-wal"); errors.Is(err, os.ErrNotExist) {
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
	return &Store{db: db, path: path, now: time.Now}, nil
}
