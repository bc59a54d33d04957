package receiver

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Whether smbd (or anyone) still holds an inbox file open for writing is
// asked of the kernel with a read lease (fcntl F_SETLEASE F_RDLCK): Linux
// grants it only while no descriptor of the file is open for writing, in
// any process, and refuses it with EAGAIN otherwise. It crosses the
// privilege boundary of the installed layout — a root smbd writes the file
// as the share's force user, the daemon's own user, and the owner of a file
// may take a lease on it — where reading root smbd's /proc/<pid>/fd does
// not. Counting inotify's IN_OPEN and IN_CLOSE_* events was measured and
// rejected: the kernel merges an event identical to the last one queued, so
// two opens in a row read as one and a file still open would look closed.
//
// The lease is held while a file is hashed and catalogued: a writer that
// opens the file meanwhile breaks it, and the ingest starts over.

// writerSignalError says the kernel cannot tell whether an inbox file is
// still open for writing: nothing is taken from the inbox until it can.
type writerSignalError struct {
	File string
	Err  error
}

func (e *writerSignalError) Error() string {
	hint := ""
	switch {
	case errors.Is(e.Err, unix.EACCES), errors.Is(e.Err, unix.EPERM):
		hint = " (the inbox files must belong to the user the receiver runs as — smbd's force user — or the receiver needs CAP_LEASE)"
	case errors.Is(e.Err, unix.EINVAL):
		hint = " (file leases are off — sysctl fs.leases-enable = 1 — or the inbox's filesystem has none)"
	}
	return fmt.Sprintf("cannot tell whether %s is still being written: file lease: %v%s", e.File, e.Err, hint)
}

func (e *writerSignalError) Unwrap() error { return e.Err }

// errStillOpen: someone holds the file open for writing.
var errStillOpen = errors.New("still open for writing")

// readLease takes a read lease on f (opened read-only): nil when nobody
// has it open for writing, errStillOpen when someone has, a
// *writerSignalError when the kernel cannot say.
func readLease(f *os.File) error {
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EAGAIN):
		return errStillOpen
	}
	return &writerSignalError{File: f.Name(), Err: err}
}

// leaseHeld says whether the read lease taken on f is intact: false once a
// writer's open has broken it.
func leaseHeld(f *os.File) bool {
	t, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err == nil && t == unix.F_RDLCK
}

// dropLease gives the lease back (closing f would too).
func dropLease(f *os.File) { unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK) }

// leasesEnabled reads fs.leases-enable; ok is false when it cannot be read.
func leasesEnabled() (on, ok bool) {
	b, err := os.ReadFile("/proc/sys/fs/leases-enable")
	if err != nil {
		return false, false
	}
	return strings.TrimSpace(string(b)) != "0", true
}
