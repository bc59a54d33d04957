package smb1

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// FS is the connected tree of a session under one context, as files; its
// errors are *os.PathError (*os.LinkError for Rename) around the server's
// ntstatus.Status.
type FS struct {
	c   *Conn
	ctx context.Context
}

// WithContext is the connected tree under ctx.
func (c *Conn) WithContext(ctx context.Context) FS { return FS{c: c, ctx: ctx} }

type fileInfo struct {
	name string
	o    handle
}

func (i fileInfo) Name() string { return i.name }

func (i fileInfo) Size() int64 { return i.o.size }

func (i fileInfo) Mode() fs.FileMode {
	if i.o.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

func (i fileInfo) ModTime() time.Time { return i.o.mtime }

func (i fileInfo) IsDir() bool { return i.o.dir }

func (i fileInfo) Sys() any { return nil }

// Stat opens name for its attributes (a file or a folder) and closes it.
func (s FS) Stat(name string) (fs.FileInfo, error) {
	o, err := s.c.ntCreate(s.ctx, name, accessReadAttributes, dispositionOpen, 0)
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	s.c.close(s.ctx, o.fid)
	base := name
	if i := strings.LastIndex(name, `\`); i >= 0 {
		base = name[i+1:]
	}
	return fileInfo{name: base, o: o}, nil
}

// OpenFile opens file name (never a folder) to read, or with os.O_WRONLY or
// os.O_RDWR to read, write and delete; os.O_CREATE|os.O_EXCL creates it.
func (s FS) OpenFile(name string, flag int, _ os.FileMode) (*File, error) {
	access := uint32(genericRead)
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		access |= genericWrite | accessDelete
	}
	disp := uint32(dispositionOpen)
	if flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0 {
		disp = dispositionCreate
	}
	o, err := s.c.ntCreate(s.ctx, name, access, disp, optionNonDirectory)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return &File{fs: s, o: o, name: name}, nil
}

// Create creates file name, which must not exist, to read and write
// (sharing read, write and delete). With deleteOnClose it asks DELETE
// access and FILE_DELETE_ON_CLOSE too: the server then removes the file
// when its handle closes or the connection drops.
func (s FS) Create(name string, deleteOnClose bool) (*File, error) {
	access, options := uint32(genericRead|genericWrite), uint32(optionNonDirectory)
	if deleteOnClose {
		access |= accessDelete
		options |= optionDeleteOnClose
	}
	o, err := s.c.ntCreate(s.ctx, name, access, dispositionCreate, options)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return &File{fs: s, o: o, name: name}, nil
}

// RemoveOpen deletes a file whose handle is open (SMB1's DELETE would
// meet that handle's sharing): a second open with DELETE access that sets
// the delete disposition, which the server refuses when the account may
// not delete or the file is read-only.
func (s FS) RemoveOpen(name string) error {
	o, err := s.c.ntCreate(s.ctx, name, accessDelete, dispositionOpen, optionNonDirectory)
	if err == nil {
		err = s.c.setDeletePending(s.ctx, o.fid)
		s.c.close(s.ctx, o.fid)
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// Remove deletes file name (SMB_COM_DELETE).
func (s FS) Remove(name string) error {
	if err := s.c.delete(s.ctx, name); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// Rename sends SMB_COM_RENAME, which refuses an existing target
// (STATUS_OBJECT_NAME_COLLISION, seen as os.ErrExist).
func (s FS) Rename(from, to string) error {
	w := binary.LittleEndian.AppendUint16(nil, 0x0006)
	// 32 + 1 + 2 + 2 + 1 buffer format = 38: the old name is aligned; the
	// new name after its buffer format byte needs a pad byte.
	d := append([]byte{0x04}, smbwire.UTF16Z(from)...)
	d = append(d, 0x04, 0)
	d = append(d, smbwire.UTF16Z(to)...)
	if _, _, _, err := s.c.call(s.ctx, cmdRename, w, d, false); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// ReadDir lists folder p ("" for the share's root), without "." and "..";
// its error is the server's status as it is.
func (s FS) ReadDir(p string) ([]fs.FileInfo, error) { return s.c.listDir(s.ctx, p) }

// File is an open file of an FS; its operations run under the FS's
// context.
type File struct {
	fs   FS
	o    handle
	name string
	off  int64
}

// Write writes p at the file offset (WRITE_ANDX, in chunks the server
// takes) and advances it.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.fs.c.write(f.fs.ctx, f.o.fid, f.off, p)
	f.off += int64(n)
	if err != nil {
		return n, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return n, nil
}

// ReadAt reads len(p) bytes at off (READ_ANDX); io.EOF at the end.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.fs.c.read(f.fs.ctx, f.o.fid, off, p)
	if err != nil && !errors.Is(err, io.EOF) {
		return n, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	return n, err
}

// Close closes the handle (SMB_COM_CLOSE).
func (f *File) Close() error {
	if err := f.fs.c.close(f.fs.ctx, f.o.fid); err != nil {
		return &os.PathError{Op: "close", Path: f.name, Err: err}
	}
	return nil
}

// FreeBytes asks the free and the total bytes of the file's share.
func (f *File) FreeBytes() (free, total uint64, err error) {
	return f.fs.c.freeBytes(f.fs.ctx)
}

// Read reads at the file offset and advances it.
func (f *File) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := f.fs.c.read(f.fs.ctx, f.o.fid, f.off, p)
	f.off += int64(n)
	if errors.Is(err, io.EOF) {
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	if err != nil {
		return n, &os.PathError{Op: "read", Path: f.name, Err: err}
	}
	return n, nil
}

// Seek sets the file offset; io.SeekEnd asks the server for the size.
func (f *File) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		off += f.off
	case io.SeekEnd:
		fi, err := f.Stat()
		if err != nil {
			return f.off, err
		}
		off += fi.Size()
	default:
		return f.off, fmt.Errorf("seek: whence %d", whence)
	}
	if off < 0 {
		return f.off, errors.New("seek: negative offset")
	}
	f.off = off
	return off, nil
}

// Sync sends SMB_COM_FLUSH.
func (f *File) Sync() error {
	_, _, _, err := f.fs.c.call(f.fs.ctx, cmdFlush, binary.LittleEndian.AppendUint16(nil, f.o.fid), nil, false)
	if err != nil {
		return &os.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return nil
}

// Stat opens the file's name again for its attributes.
func (f *File) Stat() (fs.FileInfo, error) { return f.fs.Stat(f.name) }
