package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite opens the database, its -wal and its -shm by path, and follows
// symbolic links on the way (it resolves them itself: handing it
// /proc/self/fd/N only gives it the path back). Root's commands open the
// daemon's database in a folder the daemon's user owns, who may swap any of
// those names for a link to a file of root's or a FIFO between a check of
// ours and SQLite's own open. So every file SQLite opens in this process
// goes through hardenedOpen, and every link it resolves through
// hardenedReadlink, installed with the unix VFS's xSetSystemCall (SQLite's
// own way to replace the system calls it makes): the open itself refuses
// the swap — atomically, on the descriptor — instead of a check before it.
//
// sqliteHardening is what installing them said (nil: installed).
var sqliteHardening = hardenSQLite()

// hardenSQLite replaces the unix VFS's "open" and "readlink".
func hardenSQLite() error {
	tls := libc.NewTLS()
	defer tls.Close()
	vfs := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if vfs == 0 {
		return errors.New("sqlite: no default VFS")
	}
	set := (*sqlite3.Tsqlite3_vfs)(cptr(vfs)).FxSetSystemCall
	if set == 0 {
		return errors.New("sqlite: the VFS cannot replace its system calls")
	}
	call := *(*func(*libc.TLS, uintptr, uintptr, uintptr) int32)(unsafe.Pointer(&struct{ uintptr }{set}))
	for name, fn := range map[string]any{"open": hardenedOpen, "readlink": hardenedReadlink} {
		z, err := libc.CString(name)
		if err != nil {
			return err
		}
		rc := call(tls, vfs, z, funcPointer(fn))
		libc.Xfree(tls, z)
		if rc != sqlite3.SQLITE_OK {
			return fmt.Errorf("sqlite: replace %s: code %d", name, rc)
		}
	}
	return nil
}

// funcPointer is a Go function as the transpiled SQLite calls one through
// a pointer (the function value's word, as modernc's own __ccgo_fp).
func funcPointer(fn any) uintptr {
	return (*[2]uintptr)(unsafe.Pointer(&fn))[1]
}

// cptr is an address in the transpiled SQLite's memory (libc's, never
// moved by Go's collector) as a pointer.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func setErrno(tls *libc.TLS, err error) {
	var e unix.Errno
	if !errors.As(err, &e) {
		e = unix.EIO
	}
	*(*int32)(cptr(libc.X__errno_location(tls))) = int32(e)
}

// hardenedOpen is open(2) for SQLite: no symbolic link anywhere on the
// (already resolved) path, O_NONBLOCK so a FIFO does not block, and — on
// the descriptor — a regular file with one name, a folder (opened to fsync
// it) or a device under /dev (/dev/urandom), nothing else.
func hardenedOpen(tls *libc.TLS, zFile uintptr, flags int32, mode int32) int32 {
	path := libc.GoString(zFile)
	fl := int(flags) | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	how := unix.OpenHow{Flags: uint64(fl), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if fl&unix.O_CREAT != 0 {
		how.Mode = uint64(uint32(mode) & 0o7777)
	}
	var fd int
	var err error
	for i := 0; i < 10; i++ {
		fd, err = unix.Openat2(unix.AT_FDCWD, path, &how)
		if errors.Is(err, unix.ENOSYS) {
			fd, err = unix.Open(path, fl, uint32(how.Mode))
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		setErrno(tls, err)
		return -1
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		setErrno(tls, err)
		return -1
	}
	ok := false
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		ok = st.Nlink <= 1
	case unix.S_IFDIR:
		ok = true
	case unix.S_IFCHR:
		ok = strings.HasPrefix(path, "/dev/")
	}
	if !ok {
		unix.Close(fd)
		setErrno(tls, unix.ENXIO)
		return -1
	}
	return int32(fd)
}

// hardenedReadlink is readlink(2) for SQLite's path resolution: a link is
// followed only when it belongs to root or to this process's user — never
// one another user (the daemon's, to root) put in a folder of theirs.
func hardenedReadlink(tls *libc.TLS, zPath, zBuf uintptr, n sqlite3.Tsize_t) sqlite3.Tssize_t {
	fd, err := unix.Open(libc.GoString(zPath), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		setErrno(tls, err)
		return -1
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		setErrno(tls, err)
		return -1
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		setErrno(tls, unix.EINVAL)
		return -1
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		setErrno(tls, unix.ELOOP)
		return -1
	}
	buf := unsafe.Slice((*byte)(cptr(zBuf)), int(n))
	got, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		setErrno(tls, err)
		return -1
	}
	return sqlite3.Tssize_t(got)
}
