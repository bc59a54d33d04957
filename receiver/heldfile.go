package receiver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openHeld opens a scan's held copy, rel (its catalogued HeldPath), below
// dataDir's held area for reading. The path comes from the database, which
// the daemon's user writes, and `receiver deliver` may run as root on the
// installed data dir: a path out of held/ is refused, and no component
// below dataDir is followed as a symbolic link (nor a FIFO waited on).
func openHeld(dataDir, rel string) (*os.File, error) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	if !filepath.IsLocal(rel) || len(parts) < 2 || parts[0] != "held" {
		return nil, fmt.Errorf("held copy %q: not a path below the data dir's held/", rel)
	}
	dirfd, err := unix.Open(dataDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dataDir, Err: err}
	}
	for i, name := range parts {
		last := i == len(parts)-1
		flags := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
		}
		fd, err := unix.Openat(dirfd, name, flags, 0)
		unix.Close(dirfd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				err = fmt.Errorf("%w (a symbolic link is not followed)", err)
			}
			return nil, &os.PathError{Op: "open", Path: filepath.Join(dataDir, filepath.Join(parts[:i+1]...)), Err: err}
		}
		dirfd = fd
	}
	f := os.NewFile(uintptr(dirfd), filepath.Join(dataDir, rel))
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("held copy %s: not a regular file", f.Name())
	}
	return f, nil
}

// inboxFile is a scan's catalogued inbox path, rel, as a path below
// dataDir's inbox/ none of whose folders is a symbolic link (the path comes
// from the database the daemon's user writes; `receiver force` may run as
// root). The file itself is opened without following a link (ingest).
func inboxFile(dataDir, rel string) (string, error) {
	parts := strings.Split(filepath.ToSlash(filepath.Clean(rel)), "/")
	if !filepath.IsLocal(rel) || len(parts) < 2 || parts[0] != "inbox" {
		return "", fmt.Errorf("inbox file %q: not a path below the data dir's inbox/", rel)
	}
	p := dataDir
	for _, name := range parts[:len(parts)-1] {
		p = filepath.Join(p, name)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", err
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("%s is not a folder (a symbolic link is not followed)", p)
		}
	}
	return filepath.Join(dataDir, rel), nil
}
