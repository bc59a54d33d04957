package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/scanwarden/scanwarden/internal/safefile"
	"golang.org/x/sys/unix"
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
// others is repaired when ours and refused otherwise. Root's commands open
// the daemon's database too, in a folder the daemon's user owns: every
// file is opened below the folder's fd without following a link or
// waiting (safefile), judged by fstat — a regular file with one name — and
// repaired with fchmod on that descriptor, never by path; a file of
// another user is never changed (refused, with the fix).
func prepareFile(path string) error {
	d, err := safefile.MkdirAll(filepath.Dir(path), 0o700)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	defer d.Close()
	st, err := d.Stat()
	if err != nil {
		return err
	}
	if err := tighten(d.Name(), d.Fd(), st, 0o700, "the state directory holds the failure ledger and the secrets' database: make it 0700 (chmod 700), or choose another state directory"); err != nil {
		return err
	}
	for i, name := range []string{filepath.Base(path), filepath.Base(path) + "-wal", filepath.Base(path) + "-shm"} {
		flags := os.O_RDONLY
		if i == 0 {
			flags = os.O_RDWR | os.O_CREATE
		}
		f, st, err := d.OpenRegular(name, flags, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("database file: %w", err)
		}
		err = tighten(f.Name(), int(f.Fd()), st, 0o600, "make it 0600 (chmod 600)")
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// tighten checks that the file open as fd (st its fstat) grants nothing to
// group or others; when it does and it is ours, fchmod sets it to mode;
// otherwise a *PermError says so and what to do. A file of another user's
// (the daemon's, to root) is never changed.
func tighten(path string, fd int, st unix.Stat_t, mode fs.FileMode, hint string) error {
	if st.Mode&0o077 == 0 {
		return nil
	}
	if int(st.Uid) == os.Geteuid() {
		if err := unix.Fchmod(fd, uint32(mode)); err != nil {
			return fmt.Errorf("restrict %s to %04o: %w", path, mode, err)
		}
		return nil
	}
	return &PermError{Path: path, Mode: fs.FileMode(st.Mode & 0o777), Owner: st.Uid, Hint: hint}
}
