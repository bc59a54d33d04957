package samba

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden/internal/safefile"
)

// AllowFile is the allowlist file in a receiver data dir, the one thing the
// daemon writes for root (scanwarden-smbd-reload.path watches it). Its
// mtime is when the daemon first wrote the list it holds: a write of the
// same list again (RewriteAllowFile) keeps it, so that doctor gives root
// its time from the list's first write, as the daemon's Handover does.
func AllowFile(dataDir string) string { return filepath.Join(dataDir, "smbd-allow") }

// Bounds of the allowlist file: more is not an allowlist.
const (
	maxAllowBytes   = 64 << 10
	maxAllowEntries = 1024
)

// FormatAllow renders an allowlist as AllowFile's text.
func FormatAllow(allow []netip.Prefix) []byte {
	var b bytes.Buffer
	b.WriteString("# The fallback share's allowlist, written by scanwarden for scanwarden-smbd.service.\n")
	b.WriteString("# Addresses and networks, one a line; root refuses anything else.\n")
	for _, p := range allow {
		b.WriteString(p.Masked().String())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// WriteAllowFile puts the allowlist in place atomically (the daemon's
// side) and says whether it changed. An empty list is refused: smb.conf
// would then admit any address.
func WriteAllowFile(path string, allow []netip.Prefix) (bool, error) {
	return writeAllowFile(path, allow, false)
}

// RewriteAllowFile puts the allowlist in place again, also when the file
// already holds it: a new file renamed onto the path, which the path unit
// sees as a change (a write it missed is made again). A file that held the
// same list keeps its mtime (AllowFile).
func RewriteAllowFile(path string, allow []netip.Prefix) error {
	_, err := writeAllowFile(path, allow, true)
	return err
}

func writeAllowFile(path string, allow []netip.Prefix, again bool) (bool, error) {
	if len(allow) == 0 {
		return false, badConfig("allow", "", "empty: the share would admit any address")
	}
	for _, p := range allow {
		if !p.IsValid() {
			return false, badConfig("allow", p.String(), "must be an address or a network (CIDR)")
		}
	}
	b := FormatAllow(allow)
	var written time.Time // the same list's first write, kept by a rewrite
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		if !again {
			return false, nil
		}
		if fi, err := os.Stat(path); err == nil {
			written = fi.ModTime()
		}
	}
	tmp := path + ".new"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if !written.IsZero() {
		if err := os.Chtimes(tmp, time.Time{}, written); err != nil {
			os.Remove(tmp)
			return false, fmt.Errorf("write %s: keep its time: %w", path, err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// allowEntryError is a line of the allowlist file that is not an address
// or a network.
type allowEntryError struct {
	File string
	Line int
	Text string // as found (at most 80 bytes)
}

func (e *allowEntryError) Error() string {
	return fmt.Sprintf("%s line %d: %q is not an address or a network (CIDR); the file is refused", e.File, e.Line, e.Text)
}

// parseAllow reads AllowFile's text: addresses and networks, one a line;
// blank lines and lines starting with '#' are skipped. The first other line
// fails the whole file.
func parseAllow(name string, b []byte) ([]netip.Prefix, error) {
	if len(b) > maxAllowBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than an allowlist (%d)", name, len(b), maxAllowBytes)
	}
	var out []netip.Prefix
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxAllowBytes)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p, err := ParseAllowEntry(l)
		if err != nil {
			if len(l) > 80 {
				l = l[:80]
			}
			return nil, &allowEntryError{File: name, Line: n, Text: l}
		}
		if out = append(out, p); len(out) > maxAllowEntries {
			return nil, fmt.Errorf("%s: more than %d entries", name, maxAllowEntries)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no address: the share would admit any address; the file is refused", name)
	}
	return out, nil
}

// openNoFollow opens path for reading the way root must open a file the
// daemon may have placed: from "/", one component at a time, never
// following a symbolic link (O_NOFOLLOW at every step), each directory owned
// by root or owner and writable by no one else (unless sticky, as /tmp), the
// file itself a regular file of owner's with one link (no hard link to a
// file of root's), opened without blocking (no FIFO).
func openNoFollow(path string, owner int) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s: not an absolute path", path)
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	dirfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /: %w", err)
	}
	sofar := ""
	for i, name := range parts {
		sofar += "/" + name
		last := i == len(parts)-1
		flags := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
		}
		fd, err := unix.Openat(dirfd, name, flags, 0)
		unix.Close(dirfd)
		if err != nil {
			var st unix.Stat_t
			if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) && unix.Lstat(sofar, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return nil, fmt.Errorf("%s is a symbolic link: not followed", sofar)
			}
			return nil, fmt.Errorf("open %s: %w", sofar, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("stat %s: %w", sofar, err)
		}
		uid := int(st.Uid)
		switch {
		case uid != 0 && uid != owner:
			err = fmt.Errorf("%s belongs to uid %d, neither root nor the daemon's user (uid %d)", sofar, uid, owner)
		case !last && st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
			err = fmt.Errorf("%s is writable by others than its owner", sofar)
		case last && st.Mode&unix.S_IFMT != unix.S_IFREG:
			err = fmt.Errorf("%s is not a regular file", sofar)
		case last && uid != owner:
			err = fmt.Errorf("%s belongs to uid %d, not the daemon's user (uid %d)", sofar, uid, owner)
		case last && st.Nlink != 1:
			err = fmt.Errorf("%s has %d hard links", sofar, st.Nlink)
		}
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		dirfd = fd
	}
	return os.NewFile(uintptr(dirfd), path), nil
}

// readAllowFile reads the daemon's allowlist file (AllowFile) and when the
// daemon wrote it (its mtime), from the file open gives: the one reader of
// it. Who reads it decides what is checked on the way, by the opener it
// passes. Root, before smbd gets the list: rootOpener (openNoFollow: each
// folder from "/" root's or the daemon's user's and writable by no one
// else, the file the daemon's user's with one name, no link followed).
// doctor, which only compares it with root's copy: openBelowDir (no owner
// checked: should the file not be the daemon's, root refuses it and says
// so in RefusedFile).
func readAllowFile(path string, open func(path string) (*os.File, error)) ([]netip.Prefix, time.Time, error) {
	f, err := open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("stat %s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxAllowBytes+1))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	allow, err := parseAllow(path, b)
	return allow, fi.ModTime(), err
}

// rootOpener opens the daemon's allowlist as root must: openNoFollow with
// owner the daemon's user.
func rootOpener(owner int) func(string) (*os.File, error) {
	return func(path string) (*os.File, error) { return openNoFollow(path, owner) }
}

// openBelowDir opens the daemon's allowlist below its folder as safefile
// does (no symbolic link followed, no FIFO waited on, a regular file with
// one name), whoever owns it.
func openBelowDir(path string) (*os.File, error) {
	d, err := safefile.OpenDir(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("the daemon's allowlist: %w", err)
	}
	defer d.Close()
	f, _, err := d.OpenRegular(filepath.Base(path), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("the daemon's allowlist: %w", err)
	}
	return f, nil
}
