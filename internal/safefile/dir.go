package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a folder held open as a file descriptor. Every path below it is
// resolved beneath it (never above it), with no component followed as a
// symbolic link, and opened without waiting: the one way a root command
// touches a folder the daemon's user owns (the data dir). Files are judged
// on the descriptor (fstat), changed on it (fchmod) and moved between
// descriptors (renameat2), so the daemon cannot swap a name between a
// check and an act.
type Dir struct {
	fd   int
	name string // the path it was opened as, for messages
}

// ErrLink is wrapped by the error for a path with a symbolic link (or a
// "..") on it.
var ErrLink = errors.New("a symbolic link is not followed")

// OpenDir opens the folder at path, which comes from root's own
// configuration (a --data-dir, the config's data_dir): its last component
// is not followed when a symbolic link.
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathErr("open", path, err)
	}
	return &Dir{fd: fd, name: path}, nil
}

// MkdirAll makes the folder at path (root's own configuration, as OpenDir)
// with perm when missing, then opens it as OpenDir does.
func MkdirAll(path string, perm os.FileMode) (*Dir, error) {
	if d, err := OpenDir(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return d, err
	}
	if err := os.MkdirAll(filepath.Dir(path), perm); err != nil {
		return nil, err
	}
	if err := unix.Mkdir(path, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, pathErr("mkdir", path, err)
	}
	return OpenDir(path)
}

// Name is the path the folder was opened as.
func (d *Dir) Name() string { return d.name }

// Fd is the folder's descriptor (for a caller's own *at call).
func (d *Dir) Fd() int { return d.fd }

// Close closes the folder.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Stat is fstat of the folder itself.
func (d *Dir) Stat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstat(d.fd, &st)
	return st, err
}

// Sync makes the folder's entries durable.
func (d *Dir) Sync() error {
	if err := unix.Fsync(d.fd); err != nil {
		return pathErr("fsync", d.name, err)
	}
	return nil
}

// Path is rel below the folder, for messages.
func (d *Dir) Path(rel string) string { return filepath.Join(d.name, rel) }

// local cleans rel and refuses one that is not below the folder.
func (d *Dir) local(rel string) (string, error) {
	if rel == "" || !filepath.IsLocal(rel) {
		return "", pathErr("open", d.Path(rel), fmt.Errorf("not a path below %s (%w)", d.name, ErrLink))
	}
	return filepath.Clean(rel), nil
}

// openat opens rel beneath the folder: openat2 with RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS, or — where the kernel
// lacks openat2 — a walk of one O_NOFOLLOW component at a time. O_NONBLOCK
// is always set: a FIFO does not block the open.
func (d *Dir) openat(rel string, flags int, perm uint32) (int, error) {
	rel, err := d.local(rel)
	if err != nil {
		return -1, err
	}
	flags |= unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm)
	}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(d.fd, rel, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS):
			return d.walk(rel, flags, perm)
		case errors.Is(err, unix.EAGAIN) && i < 10:
			continue // a rename raced the lookup
		}
		return -1, pathErr("open", d.Path(rel), err)
	}
}

// walk is openat without openat2: each folder on rel is opened with
// O_PATH|O_DIRECTORY|O_NOFOLLOW from the one before, the last with flags.
func (d *Dir) walk(rel string, flags int, perm uint32) (int, error) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	dirfd := d.fd
	defer func() {
		if dirfd != d.fd {
			unix.Close(dirfd)
		}
	}()
	for i, name := range parts {
		if name == ".." || name == "." || name == "" {
			return -1, pathErr("open", d.Path(rel), ErrLink)
		}
		f, m := unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0)
		if i == len(parts)-1 {
			f, m = flags, perm
		}
		fd, err := unix.Openat(dirfd, name, f, m)
		if err != nil {
			return -1, pathErr("open", d.Path(filepath.Join(parts[:i+1]...)), err)
		}
		if dirfd != d.fd {
			unix.Close(dirfd)
		}
		dirfd = fd
	}
	fd := dirfd
	dirfd = d.fd
	return fd, nil
}

// OpenDir opens the folder rel below d.
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	fd, err := d.openat(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{fd: fd, name: d.Path(rel)}, nil
}

// Mkdir makes the folder name (one component) in d with perm when missing
// (mkdirat) and opens it.
func (d *Dir) Mkdir(name string, perm os.FileMode) (*Dir, error) {
	if strings.ContainsRune(name, '/') {
		return nil, pathErr("mkdir", d.Path(name), errors.New("one folder at a time"))
	}
	if err := unix.Mkdirat(d.fd, name, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, pathErr("mkdir", d.Path(name), err)
	}
	return d.OpenDir(name)
}

// MkdirAll makes each folder of rel below d with perm when missing.
func (d *Dir) MkdirAll(rel string, perm os.FileMode) (*Dir, error) {
	rel, err := d.local(rel)
	if err != nil {
		return nil, err
	}
	cur := d
	for _, name := range strings.Split(filepath.ToSlash(rel), "/") {
		next, err := cur.Mkdir(name, perm)
		if cur != d {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		cur = next
	}
	if cur == d {
		return d.OpenDir(".")
	}
	return cur, nil
}

// Open opens the file rel below d with flags (os.O_* and O_EXCL with
// O_CREATE for a new file, perm its mode), without waiting, and gives it
// with what fstat says of it; it judges nothing (see Regular).
func (d *Dir) Open(rel string, flags int, perm os.FileMode) (*os.File, unix.Stat_t, error) {
	var st unix.Stat_t
	fd, err := d.openat(rel, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, st, err
	}
	f := os.NewFile(uintptr(fd), d.Path(rel))
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, st, pathErr("fstat", f.Name(), err)
	}
	return f, st, nil
}

// OpenRegular opens rel below d as Open does and refuses anything but a
// regular file with one name (a FIFO, a device, a folder, a hard link of
// a file elsewhere).
func (d *Dir) OpenRegular(rel string, flags int, perm os.FileMode) (*os.File, unix.Stat_t, error) {
	f, st, err := d.Open(rel, flags, perm)
	if err != nil {
		return nil, st, err
	}
	if err := Regular(f.Name(), st); err != nil {
		f.Close()
		return nil, st, err
	}
	return f, st, nil
}

// Regular says why st (of name) is not a regular file with one name, nil
// when it is.
func Regular(name string, st unix.Stat_t) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%s: not a regular file (%s): remove it", name, kind(st.Mode))
	}
	if st.Nlink > 1 {
		return fmt.Errorf("%s: has %d names (a hard link): remove it", name, st.Nlink)
	}
	return nil
}

func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a folder"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "not a file"
}

// ReadFile reads the regular file rel below d, at most max bytes (more is
// an error).
func (d *Dir) ReadFile(rel string, max int64) ([]byte, error) {
	f, _, err := d.OpenRegular(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes", f.Name(), max)
	}
	return b, nil
}

// Names lists the names in the folder, at most max (all when max <= 0).
func (d *Dir) Names(max int) ([]string, error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", d.name, err)
	}
	f := os.NewFile(uintptr(fd), d.name)
	defer f.Close()
	return f.Readdirnames(max)
}

// Lstat is what rel below d is, not followed when a link (its folders
// resolved as openat does).
func (d *Dir) Lstat(rel string) (unix.Stat_t, error) {
	var st unix.Stat_t
	parent, name, err := d.parent(rel)
	if err != nil {
		return st, err
	}
	if parent != d {
		defer parent.Close()
	}
	if err := unix.Fstatat(parent.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, pathErr("lstat", d.Path(rel), err)
	}
	return st, nil
}

// parent opens rel's folder below d (d itself for one component) and
// gives rel's last component.
func (d *Dir) parent(rel string) (*Dir, string, error) {
	rel, err := d.local(rel)
	if err != nil {
		return nil, "", err
	}
	dir, name := filepath.Split(rel)
	if dir == "" {
		return d, name, nil
	}
	p, err := d.OpenDir(filepath.Clean(dir))
	return p, name, err
}

// Remove removes the file name (one component) from d.
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return pathErr("remove", d.Path(name), err)
	}
	return nil
}

// Rename moves from's entry fromName to to's entry toName (renameat2
// with RENAME_NOREPLACE: an existing toName is never replaced) and makes
// both folders durable.
func Rename(from *Dir, fromName string, to *Dir, toName string) error {
	return rename(from, fromName, to, toName, unix.RENAME_NOREPLACE)
}

// Replace is Rename that replaces an existing toName (a file of one's
// own being swapped for a fresh copy).
func Replace(from *Dir, fromName string, to *Dir, toName string) error {
	return rename(from, fromName, to, toName, 0)
}

func rename(from *Dir, fromName string, to *Dir, toName string, flags uint) error {
	for _, n := range []string{fromName, toName} {
		if n == "" || strings.ContainsRune(n, '/') || n == "." || n == ".." {
			return fmt.Errorf("rename %s to %s: one name in a folder", from.Path(fromName), to.Path(toName))
		}
	}
	if err := unix.Renameat2(from.fd, fromName, to.fd, toName, flags); err != nil {
		return &os.LinkError{Op: "rename", Old: from.Path(fromName), New: to.Path(toName), Err: err}
	}
	if err := to.Sync(); err != nil {
		return err
	}
	return from.Sync()
}

func pathErr(op, path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		err = fmt.Errorf("%w (%w)", err, ErrLink)
	} else if errors.Is(err, unix.ENOTDIR) {
		err = fmt.Errorf("%w (or %w)", err, ErrLink)
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}
