package smbconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smb1"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// Share is a tree connection of a Conn: SMB2/3 through the SMB library, or
// SMB1 through internal/smb1. p is always a share path (backslashes).
type Share struct {
	s     *smb2.Share      // nil over SMB1
	v1    *smb1.Conn       // set over SMB1
	stamp *smbwire.Stamper // SMB2/3: delete-on-close and no-replace stamps
	// encrypt: the server asked for SMB3 encryption, for the session or
	// for this share (the first tree connect of a Conn is read along).
	encrypt bool
}

// Mount connects share on host (as the MFP stores the name: it is part of
// the tree connect path).
func (c *Conn) Mount(ctx context.Context, host, share string) (*Share, error) {
	if c.v1 != nil {
		if err := c.v1.TreeConnect(ctx, host, share); err != nil {
			return nil, err
		}
		return &Share{v1: c.v1}, nil
	}
	m, err := c.s.WithContext(ctx).Mount(fmt.Sprintf(`\\%s\%s`, host, share))
	if err != nil {
		return nil, err
	}
	sh := &Share{s: m, stamp: c.stamp}
	if c.sniff != nil {
		sh.encrypt = c.sniff.Seen().EncryptionAsked()
	}
	return sh, nil
}

// EncryptionAsked reports whether the server asked for SMB3 encryption on
// this share (or the whole session): the library then encrypts, and an MFP
// that cannot is refused (Windows, Samba's smb encrypt = required) or let
// in unencrypted (Samba's desired). Known for the first share of a Conn.
func (sh *Share) EncryptionAsked() bool { return sh.encrypt }

// SMB1 reports whether the share is reached over SMB1 (one request in
// flight at a time).
func (sh *Share) SMB1() bool { return sh.v1 != nil }

// Close disconnects the share (bounded); over SMB1 the log-off does.
func (sh *Share) Close() {
	if sh.v1 != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	sh.s.WithContext(ctx).Umount()
}

// File is an open file; its operations run under the context it was
// opened with.
type File interface {
	io.Reader
	io.Writer
	io.ReaderAt
	io.Seeker
	Sync() error
	Stat() (fs.FileInfo, error)
	Close() error
}

// OpenFile opens p with flag (os.O_*), mode 0666 for a new file.
func (sh *Share) OpenFile(ctx context.Context, p string, flag int) (File, error) {
	if sh.v1 != nil {
		f, err := sh.v1.WithContext(ctx).OpenFile(p, flag, 0)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	f, err := sh.s.WithContext(ctx).OpenFile(p, flag, 0o666)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Rename renames from to to, failing with os.ErrExist when to exists: the
// server refuses (over SMB2/3 the rename is stamped not to replace; on an
// encrypted session, where it cannot be, the name is looked up right
// before — one created by someone else in between would be replaced).
func (sh *Share) Rename(ctx context.Context, from, to string) error {
	if sh.v1 != nil {
		return sh.v1.WithContext(ctx).Rename(from, to)
	}
	s := sh.s.WithContext(ctx)
	if sh.stamp != nil && sh.stamp.Ready() {
		sh.stamp.Arm(to, smbwire.KeepStamp)
		err := s.Rename(from, to)
		if sh.stamp.Disarm() {
			if st, ok := StatusOf(err); ok && st == ntstatus.ObjectNameCollision {
				return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
			}
		}
		// Not stamped only when the rename left in a shape the smbwire.Stamper
		// does not know (or never left): it was renamed, or it failed.
		return err
	}
	if _, err := s.Stat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrExist}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return s.Rename(from, to)
}

// Stat describes p.
func (sh *Share) Stat(ctx context.Context, p string) (fs.FileInfo, error) {
	if sh.v1 != nil {
		return sh.v1.WithContext(ctx).Stat(p)
	}
	return sh.s.WithContext(ctx).Stat(p)
}

// Remove deletes p.
func (sh *Share) Remove(ctx context.Context, p string) error {
	if sh.v1 != nil {
		return sh.v1.WithContext(ctx).Remove(p)
	}
	return sh.s.WithContext(ctx).Remove(p)
}

// ReadDir lists the folder p.
func (sh *Share) ReadDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	if sh.v1 != nil {
		return sh.v1.WithContext(ctx).ReadDir(p)
	}
	return sh.s.WithContext(ctx).ReadDir(p)
}

// TestFile is a check's test file, open to write and read back.
type TestFile interface {
	io.Writer
	io.ReaderAt
	Close() error
	// FreeBytes is the free and total space of the file's volume, asked
	// through its handle (ok false when the server does not tell).
	FreeBytes() (free, total uint64, ok bool)
}

// CreateTest creates p to read and write, with delete-on-close when it
// can (doomed): the server then removes the file when its handle closes,
// or when the connection drops. It fails when p exists.
func (sh *Share) CreateTest(ctx context.Context, p string) (f TestFile, doomed bool, err error) {
	if sh.v1 != nil {
		fs := sh.v1.WithContext(ctx)
		if f, err := fs.Create(p, true); err == nil {
			return smb1File{f}, true, nil
		}
		// Refused with DELETE access: once more without (as below).
		f, err := fs.Create(p, false)
		if err != nil {
			return nil, false, err
		}
		return smb1File{f}, false, nil
	}
	s := sh.s.WithContext(ctx)
	const flag = os.O_RDWR | os.O_CREATE | os.O_EXCL
	if sh.stamp != nil {
		sh.stamp.Arm(p, smbwire.DoomStamp)
		f, err := s.OpenFile(p, flag, 0o666)
		doomed := sh.stamp.Disarm()
		if err == nil || !doomed {
			if err != nil {
				return nil, doomed, err
			}
			return smb2File{f}, doomed, nil
		}
		// Refused with DELETE access (an account that may write but not
		// delete): once more without; the write step's own delete then
		// shows whether the account may delete at all.
	}
	f, err = openSMB2(s, p, flag)
	return f, false, err
}

func openSMB2(s *smb2.Share, p string, flag int) (TestFile, error) {
	f, err := s.OpenFile(p, flag, 0o666)
	if err != nil {
		return nil, err
	}
	return smb2File{f}, nil
}

// RemoveOpen deletes a doomed test file whose handle is still open.
func (sh *Share) RemoveOpen(ctx context.Context, p string) error {
	if sh.v1 != nil {
		return sh.v1.WithContext(ctx).RemoveOpen(p)
	}
	s := sh.s.WithContext(ctx)
	if sh.stamp == nil {
		return s.Remove(p)
	}
	sh.stamp.Arm(p, smbwire.ShareStamp)
	defer sh.stamp.Disarm()
	return s.Remove(p)
}

type smb2File struct{ *smb2.File }

func (f smb2File) FreeBytes() (free, total uint64, ok bool) {
	st, err := f.Statfs()
	if err != nil {
		return 0, 0, false
	}
	return st.AvailableBlockCount() * st.BlockSize(), st.TotalBlockCount() * st.BlockSize(), true
}

type smb1File struct{ *smb1.File }

func (f smb1File) FreeBytes() (free, total uint64, ok bool) {
	free, total, err := f.File.FreeBytes()
	return free, total, err == nil
}

// StatusOf is the NT status an error carries: the SMB library's
// ResponseError, or an ntstatus.Status (internal/smb1, the sniffer).
func StatusOf(err error) (ntstatus.Status, bool) {
	var re *smb2.ResponseError
	if errors.As(err, &re) {
		return ntstatus.Status(re.Code), true
	}
	var st ntstatus.Status
	if errors.As(err, &st) {
		return st, true
	}
	return 0, false
}

// SecurityInfo reads p's security descriptor (owner, group, DACL) as the
// server sends it; over SMB1 errors.ErrUnsupported.
func (sh *Share) SecurityInfo(ctx context.Context, p string) ([]byte, error) {
	if sh.v1 != nil {
		return nil, errors.ErrUnsupported
	}
	return sh.s.WithContext(ctx).SecurityInfoRaw(p, smb2.OwnerSecurityInformation|smb2.GroupSecurityInformation|smb2.DACLSecurityInformation)
}

// NewShare is a share that a session set up elsewhere connected, with the
// stamper that read its logon (nil: no stamps).
func NewShare(s *smb2.Share, stamp *smbwire.Stamper) *Share { return &Share{s: s, stamp: stamp} }

// StampsRenames reports whether Rename is stamped not to replace (SMB2/3
// with the session's signing key known; not on an encrypted session).
func (sh *Share) StampsRenames() bool { return sh.stamp != nil && sh.stamp.Ready() }
