package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile is the file in the data dir that one running serve holds an
// exclusive flock(2) on for as long as it runs. The lock, not the file,
// says a daemon runs: a file left by a killed one is taken over at once.
// Its content ("pid N" and "listen ADDR" lines) tells a second serve whom
// it met. Only serve takes the lock: the commands that open the data dir
// beside it (doctor, admin, receiver, secrets — root's among them) never
// open this file and are never blocked by it.
const LockFile = "serve.lock"

// lockInfoMax bounds what is read of a lock file's content.
const lockInfoMax = 4096

// HeldError says another serve holds the data dir.
type HeldError struct {
	Dir    string
	PID    int    // 0: not written yet
	Listen string // "" : not bound yet (it is starting)
}

func (e *HeldError) Error() string {
	who := "another scanwarden serve"
	if e.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", e.PID)
	}
	where := "it is still starting (no listen address yet)"
	if e.Listen != "" {
		where = "its page listens on " + e.Listen
	}
	return fmt.Sprintf("data_dir %s is in use by %s: %s; one daemon per data dir — stop it first or give this one another data_dir",
		e.Dir, who, where)
}

// dataLock is serve's hold on its data dir.
type dataLock struct {
	f *os.File
}

// lockDataDir takes dir's lock without waiting: a *HeldError when another
// process holds it. The file is opened without following a link or
// waiting on a FIFO, and must be a regular file of this process's user (a
// serve run by root in the daemon's data dir writes nothing into a file
// that user planted).
func lockDataDir(dir string) (*dataLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = fmt.Errorf("%w (a symbolic link is not followed)", err)
		}
		return nil, fmt.Errorf("data_dir lock: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("data_dir lock %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("data_dir lock %s: not a regular file", path)
	}
	if uid := uint32(os.Geteuid()); st.Uid != uid {
		f.Close()
		return nil, fmt.Errorf("data_dir lock %s: belongs to uid %d, not to this process's uid %d: run serve as the data dir's owner", path, st.Uid, uid)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			he := readLockInfo(f)
			he.Dir = dir
			return nil, he
		}
		return nil, fmt.Errorf("data_dir lock %s: %w", path, err)
	}
	l := &dataLock{f: f}
	if err := l.write(""); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// announce writes the address the page listens on into the lock file.
func (l *dataLock) announce(listen string) error { return l.write(listen) }

func (l *dataLock) write(listen string) error {
	if l == nil || l.f == nil {
		return nil
	}
	s := "pid " + strconv.Itoa(os.Getpid()) + "\n"
	if listen != "" {
		s += "listen " + listen + "\n"
	}
	if err := l.f.Truncate(0); err != nil {
		return fmt.Errorf("data_dir lock: %w", err)
	}
	if _, err := l.f.WriteAt([]byte(s), 0); err != nil {
		return fmt.Errorf("data_dir lock: %w", err)
	}
	return nil
}

// Close releases the lock (emptying the file: what it said is over).
func (l *dataLock) Close() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	l.f.Close()
	l.f = nil
}

// readLockInfo reads what the holder wrote, bounded; anything but a pid
// and a printable address is left out (the file is in a folder another
// user may write).
func readLockInfo(f *os.File) *HeldError {
	he := &HeldError{}
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, lockInfoMax), lockInfoMax))
	if err != nil {
		return he
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		switch k {
		case "pid":
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				he.PID = n
			}
		case "listen":
			if len(v) <= 256 && printable(v) {
				he.Listen = v
			}
		}
	}
	return he
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return false
		}
	}
	return s != ""
}
