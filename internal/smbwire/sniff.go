package smbwire

import (
	"bytes"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// Sniffer is the connection under the SMB library during a logon. It reads
// along the SMB2 answers to NEGOTIATE and SESSION_SETUP — the dialect and
// signing, the NTLM CHALLENGE, the exact NT status of a failure, the
// session flags — which the library does not pass on; it holds the NTLM
// AUTHENTICATE until its hold allows it; and it hands the logon's messages
// to its Stamper, which gives the canary's CREATE delete-on-close
// (stamp.go). After Stop it only counts frames for the Stamper.
type Sniffer struct {
	net.Conn
	hold  func(Seen) error // nil: no hold
	stamp *Stamper         // nil: messages leave as written

	wmu       sync.Mutex
	outRemain int         // bytes of the message being written still to come
	held      atomic.Bool // hold was called, or the logon is over

	// noCaps are capability bits cleared from the NEGOTIATE request (see
	// WithoutCapabilities).
	noCaps uint32

	mu     sync.Mutex
	off    bool   // sniffing stopped (after the first tree connect)
	over   bool   // the logon is over: only a TREE_CONNECT answer is read
	hdr    []byte // transport header of the frame being read
	body   []byte // the frame's first bytes (at most MaxFrame)
	remain int    // bytes of the current frame still to read
	keep   int    // bytes of the current frame to keep
	seen   Seen
	asked  bool
}

// Seen is what the server told during a logon.
type Seen struct {
	// Negotiated is set by an SMB2 NEGOTIATE answer that chose a dialect
	// (not the 2.x of a multi-protocol negotiate); Negotiate is the last.
	Negotiated bool
	Negotiate  SMB2Negotiate
	// Identity is the NTLM CHALLENGE's (nil: none seen).
	Identity *ntlm.Identity
	// Failure is the last status of a NEGOTIATE or SESSION_SETUP answer
	// other than success, more processing and pending (0: none).
	Failure ntstatus.Status
	// SetUp is set by a successful SESSION_SETUP answer, which carried
	// SessionFlags.
	SetUp        bool
	SessionFlags uint16
	// Tree is set by the first TREE_CONNECT answer after the logon (read
	// in the clear: not on an encrypted session); TreeStatus is its
	// status, ShareFlags its share flags.
	Tree       bool
	TreeStatus ntstatus.Status
	ShareFlags uint32
}

// Share and session flags the server sets when it wants the traffic
// encrypted (MS-SMB2 2.2.10, 2.2.6).
const (
	ShareFlagEncryptData   = 0x00008000
	SessionFlagEncryptData = 0x0004
)

// EncryptionAsked reports whether the server asked for SMB3 encryption:
// for the session, or for the share of the first tree connect.
func (s Seen) EncryptionAsked() bool {
	return s.SetUp && s.SessionFlags&SessionFlagEncryptData != 0 || s.Tree && s.ShareFlags&ShareFlagEncryptData != 0
}

// CapEncryption is the NEGOTIATE request's SMB2_GLOBAL_CAP_ENCRYPTION.
const CapEncryption = 0x00000040

// WithoutCapabilities clears bits from the Capabilities of the NEGOTIATE
// request the SMB library writes — what an MFP that cannot encrypt offers
// (CapEncryption). Only for a request without negotiate contexts: SMB
// 3.1.1 hashes the request into its keys, so the library's own copy must
// be what leaves. Call before the logon starts.
func (c *Sniffer) WithoutCapabilities(bits uint32) { c.noCaps = bits }

// Guest reports whether the server marked the session as a guest (or
// null) session: the password was not really checked.
func (s Seen) Guest() bool { return s.SetUp && s.SessionFlags&0x0003 != 0 }

// NewSniffer reads along conn. stamp, when not nil, sees the logon's
// messages and may change the ones it is armed for. hold, when not nil, is
// called once, with what the server told so far, on the goroutine that
// writes the NTLM AUTHENTICATE, before it leaves; its error is that
// Write's, and the AUTHENTICATE is not sent.
func NewSniffer(conn net.Conn, stamp *Stamper, hold func(Seen) error) *Sniffer {
	return &Sniffer{Conn: conn, stamp: stamp, hold: hold}
}

var ntlmAuthenticate = []byte("NTLMSSP\x00\x03\x00\x00\x00")

func (c *Sniffer) Write(p []byte) (int, error) {
	// Searched only until hold was called or the logon ended: a
	// forwarder's 1 MiB WRITEs are not scanned for the AUTHENTICATE.
	if c.hold != nil && !c.held.Load() && bytes.Contains(p, ntlmAuthenticate) {
		c.mu.Lock()
		first := !c.asked
		c.asked = true
		seen := c.seen
		c.mu.Unlock()
		c.held.Store(true)
		if first {
			if err := c.hold(seen); err != nil {
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
// to the Stamper's hash and returns what is to be sent for p.
func (c *Sniffer) outgoing(p []byte) []byte {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	switch {
	case c.outRemain == 0 && len(p) == 4 && p[0] == 0:
		c.outRemain = frameLen(p)
		return p
	case c.outRemain > 0 && c.outRemain == len(p):
		c.outRemain = 0
		p = c.negotiateRequest(p)
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

// negotiateRequest is p with the capabilities of WithoutCapabilities
// cleared when it is a NEGOTIATE request offering no SMB 3.1.1 (a copy;
// the same length).
func (c *Sniffer) negotiateRequest(p []byte) []byte {
	if c.noCaps == 0 || len(p) < 64+36 || string(p[:4]) != "\xfeSMB" || binary.LittleEndian.Uint16(p[12:]) != 0 ||
		binary.LittleEndian.Uint32(p[16:])&1 != 0 {
		return p
	}
	n := int(binary.LittleEndian.Uint16(p[64+2:]))
	if len(p) < 64+36+2*n {
		return p
	}
	for i := range n {
		if binary.LittleEndian.Uint16(p[64+36+2*i:]) == 0x0311 {
			return p
		}
	}
	q := append([]byte(nil), p...)
	caps := binary.LittleEndian.Uint32(q[64+8:])
	binary.LittleEndian.PutUint32(q[64+8:], caps&^c.noCaps)
	return q
}

func (c *Sniffer) Read(p []byte) (int, error) {
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

// Stop ends the sniffing of the logon once it is over (set up or
// failed); the Stamper is told the logon is done. The first TREE_CONNECT
// answer after it is still read (Seen.Tree), then nothing more.
func (c *Sniffer) Stop() {
	c.held.Store(true)
	if c.stamp != nil {
		c.stamp.LogonDone()
	}
	c.mu.Lock()
	c.over = true
	if !c.seen.SetUp {
		c.off = true
		c.hdr, c.body = nil, nil
	}
	c.mu.Unlock()
}

// Seen is what the server told so far.
func (c *Sniffer) Seen() Seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen
}

// feed follows the frame boundaries of the byte stream, keeping each
// frame's first bytes (all of a negotiate or session setup response).
func (c *Sniffer) feed(b []byte) {
	for len(b) > 0 && !c.off {
		if len(c.hdr) < 4 {
			k := min(4-len(c.hdr), len(b))
			c.hdr = append(c.hdr, b[:k]...)
			b = b[k:]
			if len(c.hdr) < 4 {
				return
			}
			c.remain = frameLen(c.hdr)
			c.keep = min(c.remain, MaxFrame)
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

func (c *Sniffer) inspect(m []byte) {
	if len(m) < 64 || string(m[:4]) != "\xfeSMB" {
		if c.over {
			// An encrypted (or unknown) frame after the logon: nothing
			// more can be read in the clear.
			c.off = true
		}
		return
	}
	status := ntstatus.Status(binary.LittleEndian.Uint32(m[8:]))
	cmd := binary.LittleEndian.Uint16(m[12:])
	if c.over {
		if cmd == 3 && binary.LittleEndian.Uint32(m[16:])&1 != 0 && status != ntstatus.Pending { // TREE_CONNECT answer
			c.seen.Tree, c.seen.TreeStatus = true, status
			if status == ntstatus.Success && len(m) >= 64+8 {
				c.seen.ShareFlags = binary.LittleEndian.Uint32(m[64+4:])
			}
			c.off = true
		}
		return
	}
	if cmd > 1 { // only NEGOTIATE and SESSION_SETUP
		return
	}
	if status != ntstatus.Success && status != ntstatus.MoreProcessingRequired && status != ntstatus.Pending {
		c.seen.Failure = status
	}
	switch cmd {
	case 0:
		if n, err := ParseSMB2Negotiate(m); err == nil && n.Status == 0 && n.Dialect != DialectWildcard {
			c.seen.Negotiated = true
			c.seen.Negotiate = n
		}
	case 1:
		if status == ntstatus.MoreProcessingRequired {
			if _, blob, err := ParseSMB2SessionSetup(m); err == nil {
				if id, err := ntlm.ParseIdentity(blob); err == nil {
					c.seen.Identity = &id
				}
			}
		}
		if status == ntstatus.Success && len(m) >= 64+4 {
			c.seen.SetUp = true
			c.seen.SessionFlags = binary.LittleEndian.Uint16(m[66:])
		}
	}
}
