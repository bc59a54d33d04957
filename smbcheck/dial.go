package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden/internal/smb1"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// dialTCP connects to addr:port within ctx.
func dialTCP(ctx context.Context, addr string, port int) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
}

// smbSession is an SMB2/3 session set up by logon — the SMB library stays
// behind it, over the sniffer that read the logon along — or an SMB1
// session set up by logonSMB1.
type smbSession struct {
	conn  net.Conn
	s     *smb2.Session    // nil over SMB1
	v1    *smb1.Conn       // set over SMB1
	guest bool             // the server logged the session on as guest
	stamp *smbwire.Stamper // SMB2/3: delete-on-close for the canary's CREATE
}

// A gate is asked, with what the server told so far (dialect, signing, the
// NTLM CHALLENGE's target info), right before the NTLM AUTHENTICATE — the
// only message that can fail a logon — leaves. An error keeps it from
// leaving: nothing that could count toward a lockout is sent.
type gate func(info *ServerInfo) error

// errGateClosed marks a logon the gate stopped.
var errGateClosed = errors.New("logon not sent")

// logon negotiates SMB2/3 over conn and sets up a session with form, as the
// MFP would: NTLM User and Domain from the form, the MFP's NetBIOS name as
// Workstation. host is the name the MFP stores (used in tree connect paths).
// g, when not nil, is asked before the AUTHENTICATE is sent; it runs on the
// caller's goroutine. dialect, when not 0, is the one SMB2 revision
// offered (the MFP's highest, Device.MaxDialect). logon returns what the server told in negotiate and
// session setup (nil when it said nothing). On failure conn is left open for
// the caller to close.
func logon(ctx context.Context, conn net.Conn, port int, host string, f Form, password, workstation string, dialect uint16, g gate) (*smbSession, *ServerInfo, error) {
	ntlm := &smb2.NTLMInitiator{
		User:        f.User,
		Password:    password,
		Domain:      f.Domain,
		Workstation: workstation,
	}
	return logonWith(ctx, conn, port, host, f.Typed, ntlm, ntlm.SessionKey, dialect, g)
}

// logonWith negotiates and sets up a session with the initiator (NTLM, or
// Kerberos from kerberos.go); sessionKey is the initiator's, for the
// smbwire.Stamper; typed names the logon in errors; dialect, when not 0, is
// the one SMB2 revision offered. The gate applies to an NTLM AUTHENTICATE
// only.
func logonWith(ctx context.Context, conn net.Conn, port int, host, typed string, init smb2.Initiator, sessionKey func() []byte, dialect uint16, g gate) (*smbSession, *ServerInfo, error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if port == 139 {
		if err := smbwire.NBSSSessionRequest(conn, host); err != nil {
			return nil, nil, err
		}
	}
	d := &smb2.Dialer{Initiator: init, Negotiator: smb2.Negotiator{SpecifiedDialect: dialect}}
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
				return errGateClosed
			}
			return <-a.answer
		}
	}
	stamp := smbwire.NewStamper(sessionKey)
	sc := smbwire.NewSniffer(conn, stamp, hold)
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
			return nil, info, fmt.Errorf("session setup as %s: %w: %w", typed, errGateClosed, gateErr)
		}
		if _, ok := ntStatusOf(res.err); !ok {
			// The library folds some statuses into a message; the
			// sniffer saw the real one on the wire.
			if st := seen.Failure; st != 0 {
				return nil, info, fmt.Errorf("session setup as %s: %w (%v)", typed, st, res.err)
			}
		}
		return nil, info, fmt.Errorf("session setup as %s: %w", typed, res.err)
	}
	conn.SetDeadline(time.Time{})
	return &smbSession{conn: sc, s: res.s, guest: seen.Guest(), stamp: stamp}, info, nil
}

// close logs off (bounded) and closes the connection.
func (s *smbSession) close() {
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
