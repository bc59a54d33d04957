package smbwire

// The negotiate probe speaks just enough SMB by hand to learn, without a
// password, what go-smb2 does not tell: whether the server speaks SMB1 (go-smb2
// speaks none), the dialect it picks, whether it requires signing, and the
// NTLM CHALLENGE's target info (NetBIOS and DNS names of the server and its
// domain, and the Windows build). It sends an anonymous NTLM NEGOTIATE and
// hangs up after the CHALLENGE: no credentials leave the machine and no logon
// is attempted, so it cannot count toward a lockout.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// ErrNoSMB1 marks a server that does not speak SMB1: it refused every SMB1
// dialect offered, or hung up on an SMB1-only NEGOTIATE.
var ErrNoSMB1 = errors.New("the server refused every SMB1 dialect")

// Answer is what a server told the negotiate probe.
type Answer struct {
	// SMB1 is the server's SMB1 NEGOTIATE answer when it chose an SMB1
	// dialect, SMB1Dialect that dialect ("NT LM 0.12").
	SMB1        *SMB1Negotiate
	SMB1Dialect string
	// SMB2 is set when the server answered in SMB2; Negotiate is its
	// NEGOTIATE answer once it chose a dialect.
	SMB2      bool
	Negotiate *SMB2Negotiate
	// Identity is the NTLM CHALLENGE's (nil: none).
	Identity *ntlm.Identity
}

// Probe runs the negotiate probe over conn (already connected; for port 139
// the NetBIOS session is set up here). smb1Only offers only SMB1, as an
// SMB1-only MFP does. Once the server answered in SMB, what it told comes
// back, also with an error from a later message.
func Probe(ctx context.Context, conn net.Conn, port int, host string, smb1Only bool) (*Answer, error) {
	if _, ok := ctx.Deadline(); ok {
		defer conn.SetDeadline(time.Time{}) // after stop: ctx's end cannot cut it again
	}
	stop, err := OpenTransport(ctx, conn, port, host)
	defer stop()
	if err != nil {
		return nil, err
	}
	dialects := []string{"NT LM 0.12", "SMB 2.002", "SMB 2.???"}
	if smb1Only {
		dialects = dialects[:1]
	}
	if err := WriteFrame(conn, SMB1NegotiateRequest(dialects)); err != nil {
		return nil, fmt.Errorf("send SMB1 negotiate: %w", err)
	}
	resp, err := ReadFrame(conn)
	if err != nil {
		if smb1Only && IsPeerClose(err) {
			return nil, fmt.Errorf("SMB1 negotiate: server hung up: %w", ErrNoSMB1)
		}
		if IsPeerClose(err) {
			// An SMB server answers this negotiate (SMB2 servers too).
			return nil, fmt.Errorf("negotiate: the server hung up without an SMB answer (%w): %w", err, ErrNotSMB)
		}
		return nil, fmt.Errorf("SMB1 negotiate: %w", err)
	}
	a := &Answer{}
	switch {
	case bytes.HasPrefix(resp, []byte("\xfeSMB")):
		n, err := ParseSMB2Negotiate(resp)
		if err != nil {
			return nil, err
		}
		a.SMB2 = true
		if n.Dialect == DialectWildcard {
			return a, smb2Dance(conn, a, 1)
		}
		a.Negotiate = &n
		return a, ntlmOverSMB2(conn, a, 1)
	case bytes.HasPrefix(resp, []byte("\xffSMB")):
		n, err := ParseSMB1Negotiate(resp)
		if err != nil {
			return nil, err
		}
		if n.Status != 0 || n.DialectIndex < 0 || n.DialectIndex >= len(dialects) {
			return nil, fmt.Errorf("SMB1 negotiate: status 0x%08X, dialect index %d: %w", n.Status, n.DialectIndex, ErrNoSMB1)
		}
		a.SMB1 = &n
		a.SMB1Dialect = dialects[n.DialectIndex]
		if n.ExtendedSecurity {
			// Target info over SMB1 is a bonus: a failure here does not
			// change what was learned.
			_ = ntlmOverSMB1(conn, a)
		}
		return a, nil
	default:
		return nil, fmt.Errorf("negotiate: the server answered something that is not SMB (% x): %w", head(resp, 8), ErrNotSMB)
	}
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// smb2Dance sends the real SMB2 NEGOTIATE after a multi-protocol one.
func smb2Dance(conn net.Conn, a *Answer, msgID uint64) error {
	if err := WriteFrame(conn, SMB2NegotiateRequest(msgID)); err != nil {
		return fmt.Errorf("send SMB2 negotiate: %w", err)
	}
	resp, err := ReadFrame(conn)
	if err != nil {
		return fmt.Errorf("SMB2 negotiate: %w", err)
	}
	n, err := ParseSMB2Negotiate(resp)
	if err != nil {
		return err
	}
	if n.Status != 0 {
		return fmt.Errorf("SMB2 negotiate: %w", n.Status)
	}
	a.Negotiate = &n
	return ntlmOverSMB2(conn, a, msgID+1)
}

func ntlmOverSMB2(conn net.Conn, a *Answer, msgID uint64) error {
	if err := WriteFrame(conn, SMB2SessionSetupRequest(msgID, ntlm.SPNEGOInit(ntlm.Negotiate()))); err != nil {
		return fmt.Errorf("send session setup: %w", err)
	}
	resp, err := ReadFrame(conn)
	if err != nil {
		return fmt.Errorf("session setup: %w", err)
	}
	status, blob, err := ParseSMB2SessionSetup(resp)
	if err != nil {
		return err
	}
	if status != ntstatus.MoreProcessingRequired {
		return fmt.Errorf("session setup (NTLM negotiate): %w", status)
	}
	id, err := ntlm.ParseIdentity(blob)
	if err != nil {
		return err
	}
	a.Identity = &id
	return nil
}

func ntlmOverSMB1(conn net.Conn, a *Answer) error {
	if err := WriteFrame(conn, SMB1SessionSetupRequest(ntlm.SPNEGOInit(ntlm.Negotiate()))); err != nil {
		return err
	}
	resp, err := ReadFrame(conn)
	if err != nil {
		return err
	}
	status, blob, err := ParseSMB1SessionSetup(resp)
	if err != nil {
		return err
	}
	if status != ntstatus.MoreProcessingRequired {
		return status
	}
	id, err := ntlm.ParseIdentity(blob)
	if err != nil {
		return err
	}
	a.Identity = &id
	return nil
}
