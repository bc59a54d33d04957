package smbclient

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/scanwarden/scanwarden/smbconn"
)

// File is an open file of a Session's folder.
type File struct {
	f    smbconn.File
	name string
	w    *watchdog
}

// Name is the file's name as given to Create or Open.
func (f *File) Name() string { return f.name }

// Write writes p at the current offset (io.Writer).
func (f *File) Write(p []byte) (int, error) {
	f.w.arm()
	defer f.w.disarm()
	n, err := f.f.Write(p)
	return n, opError("write", f.name, err)
}

// Read reads from the current offset (io.Reader); io.EOF at the end.
func (f *File) Read(p []byte) (int, error) {
	f.w.arm()
	defer f.w.disarm()
	n, err := f.f.Read(p)
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, opError("read", f.name, err)
}

// WriteAt writes p at off (io.WriterAt). Unlike Write it may run
// concurrently with other WriteAt calls on the file over SMB2/3 (each
// request has its own message id and credits), so a large file can have
// several writes in flight; each call is bounded by the timeout. Over SMB1
// it returns errors.ErrUnsupported: use Write.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	wa, ok := f.f.(io.WriterAt)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	t := time.AfterFunc(f.w.timeout, f.w.cancel)
	defer t.Stop()
	n, err := wa.WriteAt(p, off)
	return n, opError("write", f.name, err)
}

// ReadAt reads at off (io.ReaderAt). Like WriteAt it may run concurrently
// with other ReadAt calls over SMB2/3; each call is bounded by the timeout.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	t := time.AfterFunc(f.w.timeout, f.w.cancel)
	defer t.Stop()
	n, err := f.f.ReadAt(p, off)
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, opError("read", f.name, err)
}

// Seek sets the offset of the next Read or Write (io.Seeker).
func (f *File) Seek(off int64, whence int) (int64, error) {
	f.w.arm()
	defer f.w.disarm()
	n, err := f.f.Seek(off, whence)
	return n, opError("read", f.name, err)
}

// Sync asks the server to flush the file to disk.
func (f *File) Sync() error {
	f.w.arm()
	defer f.w.disarm()
	return opError("write", f.name, f.f.Sync())
}

// Stat describes the open file.
func (f *File) Stat() (fs.FileInfo, error) {
	f.w.arm()
	defer f.w.disarm()
	fi, err := f.f.Stat()
	return fi, opError("stat", f.name, err)
}

// Close closes the handle; a write the server could not store may show
// only here.
func (f *File) Close() error {
	f.w.arm()
	err := f.f.Close()
	f.w.disarm()
	f.w.cancel()
	return opError("close", f.name, err)
}

// watchdog cancels a handle's context when one operation outlasts timeout.
type watchdog struct {
	cancel  context.CancelFunc
	timeout time.Duration
	t       *time.Timer
}

func (w *watchdog) arm() {
	if w.t == nil {
		w.t = time.AfterFunc(w.timeout, w.cancel)
		return
	}
	w.t.Reset(w.timeout)
}

func (w *watchdog) disarm() { w.t.Stop() }
