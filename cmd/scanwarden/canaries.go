package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dirCanaries is smbcheck's canary journal as one small file per test file
// in STATE/canaries: written before the canary is created, removed once it
// is gone. A file is "folder\nname\n"; its name is a hash of both, so
// concurrent checks never write the same file.
type dirCanaries struct{ dir string }

func (d dirCanaries) path(folder, name string) string {
	h := sha256.Sum256([]byte(folder + "\x00" + name))
	return filepath.Join(d.dir, hex.EncodeToString(h[:16]))
}

// open opens the journal's folder, made when missing, never through a
// symbolic link: it lies in the data dir, which the daemon's user writes,
// and root's checks use it too.
func (d dirCanaries) open() (int, error) {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return -1, fmt.Errorf("canary journal: %w", err)
	}
	fd, err := unix.Open(d.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("canary journal %s (not a folder, or a symbolic link): %w", d.dir, err)
	}
	return fd, nil
}

func (d dirCanaries) Record(_ context.Context, folder, name string) error {
	if strings.ContainsAny(folder+name, "\n\r\x00") {
		return fmt.Errorf("canary journal: %q in %q: a line break or NUL", name, folder)
	}
	dfd, err := d.open()
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, filepath.Base(d.path(folder, name)), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("canary journal: %w", err)
	}
	f := os.NewFile(uintptr(fd), d.path(folder, name))
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("canary journal: %s is not a regular file", f.Name())
	}
	if _, err := f.WriteString(folder + "\n" + name + "\n"); err != nil {
		return fmt.Errorf("canary journal: %w", err)
	}
	return nil
}

func (d dirCanaries) Forget(_ context.Context, folder, name string) error {
	dfd, err := unix.Open(d.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("canary journal %s: %w", d.dir, err)
	}
	defer unix.Close(dfd)
	if err := unix.Unlinkat(dfd, filepath.Base(d.path(folder, name)), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("canary journal: %w", err)
	}
	return nil
}

func (d dirCanaries) Left(_ context.Context, folder string) ([]string, error) {
	dfd, err := unix.Open(d.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("canary journal %s: %w", d.dir, err)
	}
	dir := os.NewFile(uintptr(dfd), d.dir)
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("canary journal: %w", err)
	}
	var out []string
	for _, e := range names {
		if len(out) >= 100 {
			break // a bounded sweep per check
		}
		b, ok := readJournalFile(dfd, e)
		if !ok {
			continue
		}
		f, n, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), "\n")
		if ok && f == folder {
			out = append(out, n)
		}
	}
	return out, nil
}

// readJournalFile reads one journal file (at most 4 KiB, a regular file,
// not through a link, without waiting).
func readJournalFile(dfd int, name string) ([]byte, bool) {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil || len(b) > 4096 {
		return nil, false
	}
	return b, true
}
