// Package smbconn is the SMB connection that the checks and the receiver's
// forwarder share: a TCP connection, the negotiate and session setup as a
// client profile (Device) allows — SMB2/3 through the SMB library, read
// along by a sniffer that holds the NTLM AUTHENTICATE for a gate, or SMB1
// through internal/smb1 — the share and its files.
package smbconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/smb1"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// DialTCP connects to addr:port within ctx.
func DialTCP(ctx context.Context, addr string, port int) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
}

// Conn is an SMB2/3 session set up by Logon — the SMB library stays behind
// it, over the sniffer that read the logon along — or an SMB1 session set
// up by LogonSMB1.
type Conn struct {
	conn  net.Conn
	s     *smb2.Session    // nil over SMB1
	v1    *smb1.Conn       // set over SMB1
	guest bool             // the server logged the session on as guest
	stamp *smbwire.Stamper // SMB2/3: delete-on-close for the canary's CREATE
	sniff *smbwire.Sniffer // SMB2/3: read the logon and the first tree connect along
}

// A Gate is asked, with what the server told so far (dialect, signing, the
// NTLM CHALLENGE's target info), right before the NTLM AUTHENTICATE — the
// only message that can fail a logon — leaves. An error keeps it from
// leaving: nothing that could count toward a lockout is sent.
type Gate func(info *ServerInfo) error

// ErrGateClosed marks a logon the gate stopped.
var ErrGateClosed = errors.New("logon not sent")

// Credentials are what an NTLM logon sends: the user name and domain as
// the MFP splits what it stores, the password, the MFP's NetBIOS name as
// workstation; Typed is the user name as stored, for errors.
type Credentials struct {
	User, Domain, Password, Workstation string
	Typed                               string
}

// Logon negotiates SMB2/3 over conn and sets up a session with cr, as the
// MFP would; dev limits the dialects offered (Device.offered: its highest, when
// known) and, with NTLMv1, sends NTLMv1 responses. host is the name the MFP
// stores (used in tree connect paths). g, when not nil, is asked before the
// AUTHENTICATE is sent; it runs on the caller's goroutine. Logon returns
// what the server told in negotiate and session setup (nil when it said
// nothing). On failure conn is left open for the caller to close.
func Logon(ctx context.Context, conn net.Conn, port int, host string, cr Credentials, dev Device, g Gate) (*Conn, *ServerInfo, error) {
	if dev.NTLMv1 {
		v1 := newNTLMv1Initiator(cr)
		return LogonWith(ctx, conn, port, host, cr.Typed, v1, v1.SessionKey, dev, g)
	}
	ntlm := &smb2.NTLMInitiator{
		User:        cr.User,
		Password:    cr.Password,
		Domain:      cr.Domain,
		Workstation: cr.Workstation,
	}
	return LogonWith(ctx, conn, port, host, cr.Typed, ntlm, ntlm.SessionKey, dev, g)
}

// LogonWith negotiates and sets up a session with the initiator (NTLM, or
// a check's Kerberos); sessionKey is the initiator's, for the
// smbwire.Stamper; typed names the logon in errors; dev limits the dialects
// offered. The gate applies to an NTLM AUTHENTICATE only.
func LogonWith(ctx context.Context, conn net.Conn, port int, host, typed string, init smb2.Initiator, sessionKey func() []byte, dev Device, g Gate) (*Conn, *ServerInfo, error) {
	stop, err := smbwire.OpenTransport(ctx, conn, port, host)
	defer stop()
	if err != nil {
		return nil, nil, err
	}
	d := &smb2.Dialer{Initiator: init, Negotiator: smb2.Negotiator{SpecifiedDialect: dev.offered().Wire()}}
	// The library writes the AUTHENTICATE on its own goroutine: the
	// sniffer's hold hands the gate's question over to this one.
	var asks chan gateAsk // nil: no gate
	quit := make(chan struct{})
	defer close(quit)
	var hold func(smbwire.Seen) error
	if g != nil {
		asks = make(chan gateAsk)
		hold = func(seen smbwire.Seen) error {
			info := sniffedInfo(seen)
			a := gateAsk{info: &info, answer: make(chan error, 1)}
			select {
			case asks <- a:
			case <-quit:
				return ErrGateClosed
			}
			return <-a.answer
		}
	}
	stamp := smbwire.NewStamper(sessionKey)
	sc := smbwire.NewSniffer(conn, stamp, hold)
	if dev.NoEncryption {
		// An MFP that cannot encrypt does not offer it (SMB 3.0 and 3.0.2;
		// below them there is none to offer).
		sc.WithoutCapabilities(smbwire.CapEncryption)
	}
	type result struct {
		s   *smb2.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := d.DialConn(ctx, sc, host)
		done <- result{s, err}
	}()
	var res result
	var gateErr error
wait:
	for {
		select {
		case a := <-asks:
			gateErr = g(a.info)
			a.answer <- gateErr
		case res = <-done:
			break wait
		}
	}
	sc.Stop()
	seen := sc.Seen()
	var info *ServerInfo
	if seen.Negotiated {
		si := sniffedInfo(seen)
		info = &si
	}
	if res.err != nil {
		if gateErr != nil {
			return nil, info, fmt.Errorf("session setup as %s: %w: %w", typed, ErrGateClosed, gateErr)
		}
		if _, ok := StatusOf(res.err); !ok {
			// The library folds some statuses into a message; the
			// sniffer saw the real one on the wire.
			if st := seen.Failure; st != 0 {
				return nil, info, fmt.Errorf("session setup as %s: %w (%v)", typed, st, res.err)
			}
		}
		return nil, info, fmt.Errorf("session setup as %s: %w", typed, res.err)
	}
	conn.SetDeadline(time.Time{})
	return &Conn{conn: sc, s: res.s, guest: seen.Guest(), stamp: stamp, sniff: sc}, info, nil
}

// Guest reports whether the server logged the session on as guest (or
// null): it did not check the password.
func (s *Conn) Guest() bool { return s.guest }

// Close logs off (bounded) and closes the connection.
func (s *Conn) Close() {
	if s.v1 != nil {
		s.v1.Logoff()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s.s.WithContext(ctx).Logoff()
	s.conn.Close()
}

type gateAsk struct {
	info   *ServerInfo
	answer chan error
}

// sniffedInfo is what the server told in an SMB2/3 logon, read along by
// the sniffer: the NEGOTIATE's dialect and signing, the CHALLENGE's names
// and version.
func sniffedInfo(seen smbwire.Seen) ServerInfo {
	var info ServerInfo
	if seen.Negotiated {
		info.SMB2 = true
		applyNegotiate(seen.Negotiate, &info)
	}
	if seen.Identity != nil {
		applyIdentity(*seen.Identity, &info)
	}
	return info
}

// smb1Timeout bounds each SMB1 request when the context has no deadline.
const smb1Timeout = 10 * time.Second

// LogonSMB1 negotiates SMB1 over conn and logs on with cr, as an SMB1-only
// MFP does (NTLMv1 responses when ntlmv1 is set); the counterpart of Logon
// (same gate, same result).
func LogonSMB1(ctx context.Context, conn net.Conn, port int, host string, cr Credentials, ntlmv1 bool, g Gate) (*Conn, *ServerInfo, error) {
	stop, err := smbwire.OpenTransport(ctx, conn, port, host)
	defer stop()
	if err != nil {
		return nil, nil, err
	}
	c := smb1.NewConn(conn, smb1Timeout)
	if err := c.Negotiate(ctx); err != nil {
		return nil, nil, err
	}
	var hold func() error
	if g != nil {
		hold = func() error {
			info := smb1Info(c)
			if err := g(&info); err != nil {
				return fmt.Errorf("%w: %w", ErrGateClosed, err)
			}
			return nil
		}
	}
	nc := ntlm.Credentials{User: cr.User, Domain: cr.Domain, Password: cr.Password, Workstation: cr.Workstation, NTLMv1: ntlmv1}
	if err := c.SessionSetup(ctx, nc, hold); err != nil {
		info := smb1Info(c)
		return nil, &info, fmt.Errorf("session setup as %s: %w", cr.Typed, err)
	}
	info := smb1Info(c)
	conn.SetDeadline(time.Time{})
	return &Conn{conn: conn, v1: c, guest: c.Guest()}, &info, nil
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
