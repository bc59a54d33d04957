package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrStateDirOpen is returned (wrapped in a *PermError) for a state
// directory or database file other users could reach that is not ours to
// repair.
var ErrStateDirOpen = errors.New("open to other users")

// PermError names a state directory or database file whose permissions
// would let other local users in, and what to do.
type PermError struct {
	Path  string
	Mode  fs.FileMode
	Owner uint32 // uid
	Hint  string
}

func (e *PermError) Error() string {
	return fmt.Sprintf("%s is %s (mode %04o, owner uid %d): %s", e.Path, ErrStateDirOpen, e.Mode.Perm(), e.Owner, e.Hint)
}

func (e *PermError) Unwrap() error { return ErrStateDirOpen }

// prepareFile makes sure that nobody but us can reach the database before
// SQLite opens it: the directory is created 0700, or an existing one that
// group or others can enter is repaired to 0700 when it is ours and
// refused otherwise; the file is created 0600 here (SQLite gives its -wal
// and -shm files the database's mode), and an existing one readable by
// others is repaired when ours and refused otherwise.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if err := tighten(dir, 0o700, "the state directory holds the failure ledger and the secrets' database: make it 0700 (chmod 700), or choose another state directory"); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("create database file: %w", err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		// Root's commands open the daemon's database too: a side file
		// its user made a symbolic link would have them chmod, and SQLite
		// write, whatever it points at.
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link (not followed): the database's files are plain files; remove it", p)
		}
		if err := tighten(p, 0o600, "make it 0600 (chmod 600)"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// tighten checks that path (followed, when a symbolic link) grants nothing to group or others; when it does
// and path is ours, it is set to mode; otherwise a *PermError says so.
func tighten(path string, mode fs.FileMode, hint string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	var owner uint32
	if st != nil {
		owner = st.Uid
	}
	if st != nil && int(owner) == os.Geteuid() {
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("restrict %s to %04o: %w", path, mode, err)
		}
		return nil
	}
	return &PermError{Path: path, Mode: fi.Mode(), Owner: owner, Hint: hint}
}
