package smbcheck

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smb1"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// dialTCP connects to addr:port within ctx.
func dialTCP(ctx context.Context, addr string, port int) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
}

// smbSession is an SMB2/3 session set up by logon — the SMB library stays
// behind it — or an SMB1 session set up by logonSMB1.
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
// caller's goroutine. logon returns what the server told in negotiate and
// session setup (nil when it said nothing). On failure conn is left open for
// the caller to close.
func logon(ctx context.Context, conn net.Conn, port int, host string, f Form, password, workstation string, g gate) (*smbSession, *ServerInfo, error) {
	ntlm := &smb2.NTLMInitiator{
		User:        f.User,
		Password:    password,
		Domain:      f.Domain,
		Workstation: workstation,
	}
	return logonWith(ctx, conn, port, host, f.Typed, ntlm, ntlm.SessionKey, g)
}

// logonWith negotiates and sets up a session with the initiator (NTLM, or
// Kerberos from kerberos.go); sessionKey is the initiator's, for the
// smbwire.Stamper; typed names the logon in errors. The gate applies to an NTLM
// AUTHENTICATE only.
func logonWith(ctx context.Context, conn net.Conn, port int, host, typed string, init smb2.Initiator, sessionKey func() []byte, g gate) (*smbSession, *ServerInfo, error) {
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
	d := &smb2.Dialer{Initiator: init}
	sc := &sniffConn{Conn: conn, asks: make(chan gateAsk), quit: make(chan struct{}),
		stamp: smbwire.NewStamper(sessionKey)}
	if g == nil {
		sc.asks = nil
	}
	defer close(sc.quit)
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
		case a := <-sc.asks:
			gateErr = g(a.info)
			a.answer <- gateErr
		case res = <-done:
			break wait
		}
	}
	sc.stopSniffing()
	info := sc.serverInfo()
	if res.err != nil {
		if gateErr != nil {
			return nil, info, fmt.Errorf("session setup as %s: %w: %w", typed, errGateClosed, gateErr)
		}
		if _, ok := ntStatusOf(res.err); !ok {
			// The library folds some statuses into a message; the
			// sniffer saw the real one on the wire.
			if st := sc.failure(); st != 0 {
				return nil, info, fmt.Errorf("session setup as %s: %w (%v)", typed, st, res.err)
			}
		}
		return nil, info, fmt.Errorf("session setup as %s: %w", typed, res.err)
	}
	conn.SetDeadline(time.Time{})
	return &smbSession{conn: sc, s: res.s, guest: sc.guest(), stamp: sc.stamp}, info, nil
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

// sniffConn reads along the SMB2 responses of negotiate and session setup —
// dialect, signing, the NTLM CHALLENGE, the exact NT status of a failure,
// the session flags — which the SMB library does not pass on, and holds the
// NTLM AUTHENTICATE until the gate allows it. Through stamp it gives the
// canary's CREATE delete-on-close (stamp.go).
type sniffConn struct {
	net.Conn
	asks  chan gateAsk     // nil: no gate
	quit  chan struct{}    // closed when logon no longer answers asks
	stamp *smbwire.Stamper // nil: messages leave as written

	wmu       sync.Mutex
	outRemain int         // bytes of the message being written still to come
	gated     atomic.Bool // the gate was asked, or the logon is over

	mu       sync.Mutex
	off      bool   // sniffing stopped once the session is up
	hdr      []byte // transport header of the frame being read
	body     []byte // the frame's first bytes (at most smbwire.MaxFrame)
	remain   int    // bytes of the current frame still to read
	keep     int    // bytes of the current frame to keep
	status   ntstatus.Status
	flags    uint16
	sawSetup bool
	info     ServerInfo
	sawNeg   bool
	asked    bool
}

var ntlmAuthenticate = []byte("NTLMSSP\x00\x03\x00\x00\x00")

func (c *sniffConn) Write(p []byte) (int, error) {
	// Searched only until the gate was asked or the logon ended: a
	// forwarder's 1 MiB WRITEs are not scanned for the AUTHENTICATE.
	if c.asks != nil && !c.gated.Load() && bytes.Contains(p, ntlmAuthenticate) {
		c.mu.Lock()
		first := !c.asked
		c.asked = true
		info := c.info
		c.mu.Unlock()
		c.gated.Store(true)
		if first {
			a := gateAsk{info: &info, answer: make(chan error, 1)}
			select {
			case c.asks <- a:
			case <-c.quit:
				return 0, errGateClosed
			}
			if err := <-a.answer; err != nil {
				return 0, err
			}
		}
	}
	if c.stamp == nil {
		return c.Conn.Write(p)
	}
	out := c.outgoing(p)
	n, err := c.Conn.Write(out)
	if n == len(out) {
		n = len(p) // a stamped copy has the same length
	}
	return n, err
}

// outgoing follows the frames the SMB library writes — a 4-byte transport
// header, then the message, each in one Write — hands the logon's messages
// to the smbwire.Stamper's hash and returns what is to be sent for p.
func (c *sniffConn) outgoing(p []byte) []byte {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	switch {
	case c.outRemain == 0 && len(p) == 4 && p[0] == 0:
		c.outRemain = frameLen(p)
		return p
	case c.outRemain > 0 && c.outRemain == len(p):
		c.outRemain = 0
		c.stamp.LogonMessage(p, true)
		return c.stamp.Outgoing(p)
	}
	// Any other split: counted, never changed. A logon message not seen
	// whole leaves the session without a signing key for stamps.
	for rest := p; len(rest) > 0; {
		if c.outRemain == 0 {
			if len(rest) < 4 {
				c.stamp.Blind()
				break
			}
			c.outRemain = frameLen(rest)
			rest = rest[4:]
			c.stamp.Blind()
		}
		k := min(c.outRemain, len(rest))
		c.outRemain -= k
		rest = rest[k:]
	}
	return p
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if !c.off {
			c.feed(p[:n])
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *sniffConn) stopSniffing() {
	c.gated.Store(true)
	if c.stamp != nil {
		c.stamp.LogonDone()
	}
	c.mu.Lock()
	c.off = true
	c.hdr, c.body = nil, nil
	c.mu.Unlock()
}

// feed follows the frame boundaries of the byte stream, keeping each
// frame's first bytes (all of a negotiate or session setup response).
func (c *sniffConn) feed(b []byte) {
	for len(b) > 0 {
		if len(c.hdr) < 4 {
			k := min(4-len(c.hdr), len(b))
			c.hdr = append(c.hdr, b[:k]...)
			b = b[k:]
			if len(c.hdr) < 4 {
				return
			}
			c.remain = frameLen(c.hdr)
			c.keep = min(c.remain, smbwire.MaxFrame)
			c.body = c.body[:0]
		}
		if c.remain > 0 {
			k := min(c.remain, len(b))
			if want := c.keep - len(c.body); want > 0 {
				c.body = append(c.body, b[:min(want, k)]...)
			}
			c.remain -= k
			b = b[k:]
		}
		if c.remain == 0 {
			if c.hdr[0] == 0 {
				c.inspect(c.body)
				if c.stamp != nil {
					c.stamp.LogonMessage(c.body, len(c.body) == frameLen(c.hdr))
				}
			}
			c.hdr = c.hdr[:0]
		}
	}
}

func frameLen(h []byte) int { return int(h[1])<<16 | int(h[2])<<8 | int(h[3]) }

func (c *sniffConn) inspect(m []byte) {
	if len(m) < 64 || string(m[:4]) != "\xfeSMB" {
		return
	}
	status := ntstatus.Status(binary.LittleEndian.Uint32(m[8:]))
	cmd := binary.LittleEndian.Uint16(m[12:])
	if cmd > 1 { // only NEGOTIATE and SESSION_SETUP
		return
	}
	if status != ntstatus.Success && status != ntstatus.MoreProcessingRequired && status != ntstatus.Pending {
		c.status = status
	}
	switch cmd {
	case 0:
		if n, err := smbwire.ParseSMB2Negotiate(m); err == nil && n.Status == 0 && n.Dialect != 0x02ff {
			c.sawNeg = true
			c.info.SMB2 = true
			applyNegotiate(n, &c.info)
		}
	case 1:
		if status == ntstatus.MoreProcessingRequired {
			if _, blob, err := smbwire.ParseSMB2SessionSetup(m); err == nil {
				if ch, err := ntlm.ParseIdentity(blob); err == nil {
					applyIdentity(ch, &c.info)
				}
			}
		}
		if status == ntstatus.Success && len(m) >= 64+4 {
			c.sawSetup = true
			c.flags = binary.LittleEndian.Uint16(m[66:])
		}
	}
}

func (c *sniffConn) failure() ntstatus.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// serverInfo is what the server told, or nil when it did not negotiate.
func (c *sniffConn) serverInfo() *ServerInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.sawNeg {
		return nil
	}
	info := c.info
	return &info
}

// guest reports whether the server marked the session as a guest (or null)
// session: the password was not really checked.
func (c *sniffConn) guest() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sawSetup && c.flags&0x0003 != 0
}
