// Package store is the only package that speaks SQL. It keeps scanwarden's
// state in one SQLite file (modernc.org/sqlite, no cgo): WAL journal, a busy
// timeout so the CLI and the daemon can share the file, foreign keys on, and
// numbered migrations embedded in the binary, each applied in its own
// transaction.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scanwarden/scanwarden/internal/safefile"
	"github.com/scanwarden/scanwarden/seal"
	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

func init() {
	// The WAL file stays when the last connection closes: the next
	// process's first commit then writes into it instead of creating it
	// anew (a sync of the file and of its directory on the first logon's
	// path). Its content is checkpointed as before.
	sqlite.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		fc, ok := c.(sqlite.FileControl)
		if !ok {
			return nil
		}
		_, err := fc.FileControlPersistWAL("main", 1)
		return err
	})
}

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultFile is the database file name inside a state directory.
const DefaultFile = "scanwarden.db"

// Store is an open state database.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
	key  *seal.Key // set by UnlockKey; seals and opens secret columns
	// readOnly: opened by OpenReadOnly (UnlockKey only loads the key)
	readOnly bool
	// linkLocal: a destination may name a link-local address (the
	// config's allow_link_local; AllowLinkLocal)
	linkLocal atomic.Bool
}

// AllowLinkLocal sets whether a destination written from now on may name a
// link-local address (the config's allow_link_local; refused by default).
func (s *Store) AllowLinkLocal(ok bool) { s.linkLocal.Store(ok) }

// Open opens (creating when needed) the database at path, checks that the
// connection settings took effect and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open store: empty path")
	}
	if sqliteHardening != nil {
		return nil, fmt.Errorf("open store %s: %w", path, sqliteHardening)
	}
	if err := prepareFile(path); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// database/sql keeps 2 idle connections by default: a burst of
	// concurrent readers (the web site under load) then opens and closes a
	// connection per query, each re-reading the schema and the pragmas.
	// Idle connections are closed after a minute, so an idle daemon keeps
	// none of their page cache.
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(time.Minute)
	s := &Store{db: db, path: path, now: time.Now}
	if err := whileBusy(ctx, func() error {
		if err := checkPragmas(ctx, db); err != nil {
			return err
		}
		return migrate(ctx, db, s.now)
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// openBusyFor bounds how long Open retries a database another process is
// making at the same moment (the busy timeout's own span).
const openBusyFor = 10 * time.Second

// whileBusy runs first again while SQLite answers busy, for openBusyFor.
// A connection's first statement on a new file turns the journal into WAL,
// which needs the file to itself: when two processes do that at once, one
// of them is told "database is locked" at once, without the busy timeout,
// as SQLite answers a lock wait that could deadlock.
func whileBusy(ctx context.Context, first func() error) error {
	deadline := time.Now().Add(openBusyFor)
	wait := 5 * time.Millisecond
	for {
		err := first()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isBusy says whether err is SQLite's SQLITE_BUSY (or one of its extended
// codes).
func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// OpenDir opens DefaultFile inside the state directory dir.
func OpenDir(ctx context.Context, dir string) (*Store, error) {
	return Open(ctx, filepath.Join(dir, DefaultFile))
}

// OpenUnlocked opens the store in the state directory dir and unlocks its
// sealing key (KeyFile: keyFile, else $CREDENTIALS_DIRECTORY's, else the
// installed or dir's own; made on first use), so that it reads and writes
// the sealed secrets. It is the one way the daemon and the CLI open it
// (doctor opens it read-only and never makes a key).
func OpenUnlocked(ctx context.Context, dir, keyFile string, getenv func(string) string) (*Store, error) {
	return unlocked(ctx, dir, keyFile, getenv, OpenDir)
}

// OpenReadOnlyUnlocked is OpenUnlocked for a command that only reads: the
// database is opened read-only (OpenReadOnly) and the key only loaded.
func OpenReadOnlyUnlocked(ctx context.Context, dir, keyFile string, getenv func(string) string) (*Store, error) {
	if fresh, err := freshOwnDir(dir); err == nil && fresh {
		// this user's own new data dir: its database and key are made as
		// OpenUnlocked makes them
		st, err := OpenUnlocked(ctx, dir, keyFile, getenv)
		if err != nil {
			return nil, err
		}
		st.Close()
	}
	return unlocked(ctx, dir, keyFile, getenv, OpenReadOnlyDir)
}

// OpenReadOnlyDir opens DefaultFile inside dir read-only (OpenReadOnly).
// A data dir of this user's without a database yet gets an empty one
// first (as OpenDir makes it); in another user's (the daemon's, to root)
// none is made: the error says so.
func OpenReadOnlyDir(ctx context.Context, dir string) (*Store, error) {
	db := filepath.Join(dir, DefaultFile)
	switch fresh, err := freshOwnDir(dir); {
	case err != nil:
		return nil, fmt.Errorf("open store %s: %w", db, err)
	case fresh:
		st, err := OpenDir(ctx, dir)
		if err != nil {
			return nil, err
		}
		st.Close()
	}
	st, err := OpenReadOnly(ctx, db)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no database in %s yet: the daemon makes it at its first start)", err, dir)
	}
	return st, err
}

// freshOwnDir says whether dir holds no database and is this user's to
// make one in (or is not there at all).
func freshOwnDir(dir string) (bool, error) {
	d, err := safefile.OpenDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	defer d.Close()
	if _, err := d.Lstat(DefaultFile); !errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	st, err := d.Stat()
	return err == nil && int(st.Uid) == os.Geteuid(), err
}

func unlocked(ctx context.Context, dir, keyFile string, getenv func(string) string, open func(context.Context, string) (*Store, error)) (*Store, error) {
	st, err := open(ctx, dir)
	if err != nil {
		return nil, err
	}
	if _, err := st.UnlockKey(ctx, KeyFile(keyFile, getenv, dir)); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Ping reads the schema from the file: the store still answers (the
// daemon pets systemd's watchdog only after it does).
func (s *Store) Ping(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return fmt.Errorf("store ping: %w", err)
	}
	return nil
}

// checkPragmas checks that the connection settings took effect.
func checkPragmas(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("read journal_mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	var fk int
	if err := db.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
		return fmt.Errorf("read foreign_keys: %w", err)
	}
	if fk != 1 {
		return errors.New("foreign keys are off")
	}
	return nil
}

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and _", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s share number %d", other, name, v)
		}
		seen[v] = name
		b, err := fs.ReadFile(migrations, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// migrate applies the embedded migrations db has not applied yet, each
// in its own transaction (applied_at from now).
func migrate(ctx context.Context, db *sql.DB, now func() time.Time) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	// Only what is missing takes a write transaction: every CLI run opens
	// the store, and the schema is nearly always current.
	applied := map[int]bool{}
	rows, err := db.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := apply(ctx, db, m, now); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// apply runs one migration in its own transaction, unless another process
// applied it meanwhile.
func apply(ctx context.Context, db *sql.DB, m migration, now func() time.Time) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
		m.version, m.name, now().UTC().Format(time.RFC3339Nano)); err != nil {
		return err
	}
	return tx.Commit()
}

// tx runs fn in one transaction; exported methods use it so each owns its
// transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// execOne runs one conditional statement; ok says it changed exactly one
// row (the condition held). One statement is atomic by itself (SQLite runs
// it in its own transaction), and its count of changed rows is read on its
// connection as it ends: it needs no transaction of ours.
func (s *Store) execOne(ctx context.Context, query string, args ...any) (ok bool, err error) {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// optTime writes the zero time as "".
func optTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// parseOptTime reads what optTime wrote: "" is the zero time.
func parseOptTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return parseTime(s)
}
