package smbcheck

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
)

// dialTCP connects to addr:port within ctx.
func dialTCP(ctx context.Context, addr string, port int) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
}

// smbSession is an SMB2/3 session set up by logon; the SMB library stays
// behind it.
type smbSession struct {
	conn net.Conn
	s    *smb2.Session
}

// logon negotiates SMB2/3 over conn and sets up a session with form, as the
// MFP would: NTLM User and Domain from the form, the MFP's NetBIOS name as
// Workstation. host is the name the MFP stores (used in tree connect paths).
// On failure conn is left open for the caller to close.
func logon(ctx context.Context, conn net.Conn, port int, host string, f Form, password, workstation string) (*smbSession, error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if port == 139 {
		if err := nbssSessionRequest(conn, host); err != nil {
			return nil, err
		}
	}
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{
		User:        f.User,
		Password:    password,
		Domain:      f.Domain,
		Workstation: workstation,
	}}
	s, err := d.DialConn(ctx, conn, host)
	if err != nil {
		return nil, fmt.Errorf("session setup as %s: %w", f.Typed, err)
	}
	conn.SetDeadline(time.Time{})
	return &smbSession{conn: conn, s: s}, nil
}

// close logs off (bounded) and closes the connection.
func (s *smbSession) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s.s.WithContext(ctx).Logoff()
	s.conn.Close()
}
