package smbcheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"sync"
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
	conn  net.Conn
	s     *smb2.Session
	guest bool // the server logged the session on as guest
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
	sc := &sniffConn{Conn: conn}
	s, err := d.DialConn(ctx, sc, host)
	if err != nil {
		if _, ok := ntStatusOf(err); !ok {
			// The library folds some statuses into a message; the
			// sniffer saw the real one on the wire.
			if st := sc.failure(); st != 0 {
				return nil, fmt.Errorf("session setup as %s: %w (%v)", f.Typed, st, err)
			}
		}
		return nil, fmt.Errorf("session setup as %s: %w", f.Typed, err)
	}
	conn.SetDeadline(time.Time{})
	return &smbSession{conn: sc, s: s, guest: sc.guest()}, nil
}

// sniffConn watches the SMB2 headers a server sends during negotiate and
// session setup, to keep the exact NT status of a failure and the session
// flags, which the SMB library does not pass on.
type sniffConn struct {
	net.Conn
	mu       sync.Mutex
	hdr      []byte // start of the frame being read (up to 72 bytes)
	remain   int    // bytes of the current frame still to skip
	status   NTStatus
	flags    uint16
	sawSetup bool
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.feed(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// sniffHeader is how much of a frame the sniffer looks at: the 4-byte
// transport header, the 64-byte SMB2 header and 4 bytes of the body.
const sniffHeader = 4 + 64 + 4

func (c *sniffConn) feed(b []byte) {
	for len(b) > 0 {
		if c.remain > 0 {
			k := min(c.remain, len(b))
			c.remain -= k
			b = b[k:]
			continue
		}
		need := 4 // the transport header first, then as much of the frame as is useful
		if len(c.hdr) >= 4 {
			need = min(sniffHeader, 4+frameLen(c.hdr))
		}
		k := min(need-len(c.hdr), len(b))
		c.hdr = append(c.hdr, b[:k]...)
		b = b[k:]
		if len(c.hdr) >= 4 && len(c.hdr) == min(sniffHeader, 4+frameLen(c.hdr)) {
			c.inspect(c.hdr)
			c.remain = 4 + frameLen(c.hdr) - len(c.hdr)
			c.hdr = c.hdr[:0]
		}
	}
}

func frameLen(h []byte) int { return int(h[1])<<16 | int(h[2])<<8 | int(h[3]) }

func (c *sniffConn) inspect(h []byte) {
	if len(h) < 4+64 || string(h[4:8]) != "\xfeSMB" {
		return
	}
	m := h[4:]
	status := NTStatus(binary.LittleEndian.Uint32(m[8:]))
	cmd := binary.LittleEndian.Uint16(m[12:])
	if cmd > 1 { // only NEGOTIATE and SESSION_SETUP
		return
	}
	if status != StatusSuccess && status != StatusMoreProcessingRequired && status != 0x00000103 /* STATUS_PENDING */ {
		c.status = status
	}
	if cmd == 1 && status == StatusSuccess && len(m) >= 64+4 {
		c.sawSetup = true
		c.flags = binary.LittleEndian.Uint16(m[66:])
	}
}

func (c *sniffConn) failure() NTStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// guest reports whether the server marked the session as a guest (or null)
// session: the password was not really checked.
func (c *sniffConn) guest() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sawSetup && c.flags&0x0003 != 0
}

// close logs off (bounded) and closes the connection.
func (s *smbSession) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	s.s.WithContext(ctx).Logoff()
	s.conn.Close()
}
