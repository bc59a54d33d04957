package smbcheck

// The SMB1 replay, as a check and a Session use it: internal/smb1 speaks
// SMB1 (NT LM 0.12) as an SMB1-only MFP does; here its logon is gated like
// every logon, what the server told becomes a ServerInfo, and its share
// serves the path and write steps and a Session. ntlmv1Refused tells a
// server that refuses NTLMv1 from a wrong password.

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/smb1"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// logonSMB1 negotiates SMB1 over conn and logs on with form, as an
// SMB1-only MFP does; the counterpart of logon (same gate, same result).
func logonSMB1(ctx context.Context, conn net.Conn, port int, host string, f Form, password, workstation string, g gate) (*smbSession, *ServerInfo, error) {
	return logonSMB1NTLM(ctx, conn, port, host, f, password, workstation, g, false)
}

// logonSMB1NTLM is logonSMB1 with NTLMv1 responses when ntlmv1 is set.
func logonSMB1NTLM(ctx context.Context, conn net.Conn, port int, host string, f Form, password, workstation string, g gate, ntlmv1 bool) (*smbSession, *ServerInfo, error) {
	if port == 139 {
		if dl, ok := ctx.Deadline(); ok {
			conn.SetDeadline(dl)
		}
		if err := smbwire.NBSSSessionRequest(conn, host); err != nil {
			return nil, nil, err
		}
	}
	c := smb1.NewConn(conn, defaultStepTimeout)
	if err := c.Negotiate(ctx); err != nil {
		return nil, nil, err
	}
	var hold func() error
	if g != nil {
		hold = func() error {
			info := smb1Info(c)
			if err := g(&info); err != nil {
				return fmt.Errorf("%w: %w", errGateClosed, err)
			}
			return nil
		}
	}
	cr := ntlm.Credentials{User: f.User, Domain: f.Domain, Password: password, Workstation: workstation, NTLMv1: ntlmv1}
	if err := c.SessionSetup(ctx, cr, hold); err != nil {
		info := smb1Info(c)
		return nil, &info, fmt.Errorf("session setup as %s: %w", f.Typed, err)
	}
	info := smb1Info(c)
	conn.SetDeadline(time.Time{})
	return &smbSession{conn: conn, v1: c, guest: c.Guest()}, &info, nil
}

// smb1Info is what an SMB1 server told: its NEGOTIATE answer and, once the
// logon got that far, its NTLM CHALLENGE.
func smb1Info(c *smb1.Conn) ServerInfo {
	n := c.Negotiated()
	info := ServerInfo{SMB1: true, Dialect: smb1.Dialect, SigningEnabled: n.SigningEnabled(), SigningRequired: n.SigningRequired()}
	if id, ok := c.Identity(); ok {
		applyIdentity(id, &info)
	}
	return info
}

// smb1FS is an SMB1 share as the path and write steps use it (no ReadDir:
// the path step does not list over SMB1).
type smb1FS struct{ fs smb1.FS }

func (s smb1FS) Stat(name string) (os.FileInfo, error) { return s.fs.Stat(name) }
func (s smb1FS) Remove(name string) error              { return s.fs.Remove(name) }
func (s smb1FS) RemoveOpen(name string) error          { return s.fs.RemoveOpen(name) }

func (s smb1FS) OpenFile(name string, flag int, perm os.FileMode) (remoteFile, error) {
	f, err := s.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return smb1File{f}, nil
}

func (s smb1FS) CreateCanary(name string) (remoteFile, bool, error) {
	if f, err := s.fs.Create(name, true); err == nil {
		return smb1File{f}, true, nil
	}
	// Refused with DELETE access: once more without (see smb2FS).
	f, err := s.fs.Create(name, false)
	if err != nil {
		return nil, false, err
	}
	return smb1File{f}, false, nil
}

type smb1File struct{ *smb1.File }

func (f smb1File) freeBytes() (free, total uint64, ok bool) {
	free, total, err := f.FreeBytes()
	return free, total, err == nil
}

// smb1Tree is a Session's share over SMB1.
type smb1Tree struct{ c *smb1.Conn }

func (t smb1Tree) openFile(ctx context.Context, p string, flag int) (sessionFile, error) {
	f, err := t.c.WithContext(ctx).OpenFile(p, flag, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (t smb1Tree) rename(ctx context.Context, from, to string) error {
	return t.c.WithContext(ctx).Rename(from, to)
}

func (t smb1Tree) stat(ctx context.Context, p string) (fs.FileInfo, error) {
	return t.c.WithContext(ctx).Stat(p)
}

func (t smb1Tree) remove(ctx context.Context, p string) error {
	return t.c.WithContext(ctx).Remove(p)
}

func (t smb1Tree) readDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	return t.c.WithContext(ctx).ReadDir(p)
}

// close: the tree is disconnected at log-off.
func (t smb1Tree) close() {}

// ntlmv1Refused tells, for an MFP that logs on with NTLMv1, a server that
// refuses NTLMv1 from a wrong password: after a plain logon failure it
// replays the same name and password once with NTLMv2, within the budget.
// It ends the session step when NTLMv2 is accepted and reports whether it
// did.
func (c *checker) ntlmv1Refused(ctx context.Context, s *stepState, res attemptResult) bool {
	if !c.smb1 || !c.o.Device.NTLMv1 || c.anonymous() || !res.status.IsLogonFailure() {
		return false
	}
	c.ntlmv2 = true
	v2 := c.attempt(ctx, nil, storedForm(c.t.User))
	c.ntlmv2 = false
	switch {
	case v2.sess != nil:
		v2.sess.close()
		s.Evidence["ntlmv1"] = res.status.String()
		s.Evidence["ntlmv2"] = "accepted"
		c.fail(s, CauseSMB1Refused, fmt.Sprintf("the server refuses the MFP's NTLMv1 logon (%s), and accepts the same user name and password with NTLMv2", res.status),
			"Switch the MFP to NTLMv2 (a firmware update may be needed), or better to SMB2/SMB3; only as a stop-gap allow NTLMv1 on the server (Samba: ntlm auth = ntlmv1-permitted; Windows: LmCompatibilityLevel 4 or lower), which weakens every account's password protection.")
		c.skipWhy("not tried: the password is right, the server refuses NTLMv1", StepForms)
		return true
	case v2.refused != nil:
		s.Evidence["ntlmv2"] = "not replayed: " + v2.refused.Reason
	default:
		s.Evidence["ntlmv2"] = errText(v2)
	}
	return false
}
