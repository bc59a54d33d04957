package smbclient

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// Session is a logged-on tree connection to a destination's folder: every
// name given to its methods is relative to that folder and
// must be a plain file name or a relative path without "..". It is safe
// for use by one goroutine at a time; Close logs off.
type Session struct {
	timeout time.Duration
	guest   bool
	dialect string
	sess    *smbconn.Conn
	tree    *smbconn.Share
	folder  string // below the share, with backslashes; "" for the share root

	closeOnce sync.Once
}

// mount makes a Session of sess, a logged-on connection to host speaking
// dialect: it connects share and checks that folder (below the share,
// backslash-separated; "" for the share root) exists and is a folder.
// Each operation of the session is bounded by timeout. On failure sess is
// logged off and the error is an *Error.
func mount(ctx context.Context, sess *smbconn.Conn, host, share, folder, dialect string, timeout time.Duration) (*Session, error) {
	s := &Session{timeout: timeout, sess: sess, guest: sess.Guest(), dialect: dialect, folder: folder}
	if err := s.connectFolder(ctx, host, share); err != nil {
		return nil, err
	}
	return s, nil
}

// connectFolder connects s's share and checks that its folder exists and
// is a folder; on failure the session is logged off.
func (s *Session) connectFolder(ctx context.Context, host, share string) error {
	tctx, tcancel := context.WithTimeout(ctx, s.timeout)
	defer tcancel()
	sh, err := s.sess.Mount(tctx, host, share)
	if err != nil {
		s.sess.Close()
		return opError("tree connect", "", err)
	}
	s.tree = sh
	if s.folder != "" {
		fi, err := s.tree.Stat(tctx, s.folder)
		if err == nil && !fi.IsDir() {
			err = &Error{Op: "folder", Cause: scanwarden.CausePathNotFound, Err: fmt.Errorf("%s is a file, not a folder", s.folder)}
		}
		if err != nil {
			s.Close()
			return opError("folder", "", err)
		}
	}
	return nil
}

// Guest reports whether the server logged the session on as guest: it did
// not check the password.
func (s *Session) Guest() bool { return s.guest }

// Dialect is the SMB dialect in use ("3.1.1", or "NT LM 0.12" for SMB1).
func (s *Session) Dialect() string { return s.dialect }

// StampsRenames reports whether the server itself refuses a Rename onto
// an existing name (SMB2/3 without encryption: the rename is stamped not
// to replace); otherwise Rename looks the name up right before.
func (s *Session) StampsRenames() bool { return s.tree.StampsRenames() }

// rel turns a name relative to the folder into a share path.
func (s *Session) rel(name string) (string, error) {
	var parts []string
	for _, p := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if p == "." {
			continue
		}
		if p == ".." {
			return "", fmt.Errorf("%q: contains a .. component", name)
		}
		parts = append(parts, p)
	}
	if s.folder != "" {
		parts = append([]string{s.folder}, parts...)
	}
	return strings.Join(parts, `\`), nil
}

// op runs fn on the tree under ctx bounded by the session's timeout.
func (s *Session) op(ctx context.Context, op, name string, fn func(ctx context.Context, p string) error) error {
	p, err := s.rel(name)
	if err != nil {
		return &Error{Op: op, Path: name, Cause: scanwarden.CauseUnknown, Err: err}
	}
	octx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return opError(op, name, fn(octx, p))
}

// Create makes a new file name in the folder, failing when it exists
// (os.ErrExist), opened for writing and reading back. ctx bounds the whole
// life of the file; each operation on it is also bounded by the timeout.
func (s *Session) Create(ctx context.Context, name string) (*File, error) {
	return s.openFile(ctx, "create", name, os.O_RDWR|os.O_CREATE|os.O_EXCL)
}

// Open opens an existing file of the folder for reading.
func (s *Session) Open(ctx context.Context, name string) (*File, error) {
	return s.openFile(ctx, "read", name, os.O_RDONLY)
}

func (s *Session) openFile(ctx context.Context, op, name string, flag int) (*File, error) {
	p, err := s.rel(name)
	if err != nil {
		return nil, &Error{Op: op, Path: name, Cause: scanwarden.CauseUnknown, Err: err}
	}
	// The handle's context outlives this call; a watchdog cancels it when
	// one operation takes longer than the timeout.
	fctx, cancel := context.WithCancel(ctx)
	w := &watchdog{cancel: cancel, timeout: s.timeout}
	w.arm()
	f, err := s.tree.OpenFile(fctx, p, flag)
	w.disarm()
	if err != nil {
		cancel()
		return nil, opError(op, name, err)
	}
	return &File{f: f, name: name, w: w}, nil
}

// Rename renames a file of the folder. It fails with os.ErrExist when to
// exists: the server refuses (over SMB2/3 the rename is stamped not to
// replace, see internal/smbwire/stamp.go; on an encrypted session, where
// it cannot be, the name is looked up right before — one created by
// someone else in between would be replaced).
func (s *Session) Rename(ctx context.Context, from, to string) error {
	pto, err := s.rel(to)
	if err != nil {
		return &Error{Op: "rename", Path: to, Cause: scanwarden.CauseUnknown, Err: err}
	}
	return s.op(ctx, "rename", from, func(ctx context.Context, p string) error { return s.tree.Rename(ctx, p, pto) })
}

// Stat describes a file of the folder ("" is the folder itself).
func (s *Session) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := s.op(ctx, "stat", name, func(ctx context.Context, p string) error {
		var err error
		fi, err = s.tree.Stat(ctx, p)
		return err
	})
	return fi, err
}

// Remove deletes a file of the folder.
func (s *Session) Remove(ctx context.Context, name string) error {
	return s.op(ctx, "remove", name, func(ctx context.Context, p string) error { return s.tree.Remove(ctx, p) })
}

// ReadDir lists a folder below the destination folder ("" for itself).
func (s *Session) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	var list []fs.FileInfo
	err := s.op(ctx, "list", name, func(ctx context.Context, p string) error {
		var err error
		list, err = s.tree.ReadDir(ctx, p)
		return err
	})
	return list, err
}

// Close disconnects the share, logs off and closes the connection (each
// bounded); files still open are abandoned.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.tree != nil {
			s.tree.Close()
		}
		s.sess.Close()
	})
	return nil
}
