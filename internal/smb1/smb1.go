// Package smb1 is just enough of SMB1 (NT LM 0.12) [MS-CIFS, MS-SMB] to
// replay what an SMB1-only MFP does with a scan destination: negotiate, an
// NTLM logon through SESSION_SETUP_ANDX with extended security (signed
// afterwards when the server requires it), tree connect, opening each
// folder, creating, writing, reading back, renaming, listing, closing and
// deleting a file, logging off. The SMB library smbcheck uses speaks no
// SMB1, and driving smbclient would hide the exact NT status, the moment
// before the AUTHENTICATE and the NTLM workstation behind a text interface.
//
// It knows messages, not causes: a server's refusal comes back as its
// ntstatus.Status (wrapped with the operation); what that means for a scan
// destination is smbcheck's business. Every length and offset a server
// sends is checked against the message; a server frame is at most
// smbwire.MaxFrame bytes.
package smb1

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// Dialect is the one SMB1 dialect offered, as an SMB1-only MFP offers it.
const Dialect = "NT LM 0.12"

// SMB1 commands used by the replay.
const (
	cmdClose          = 0x04
	cmdFlush          = 0x05
	cmdDelete         = 0x06
	cmdRename         = 0x07
	cmdTrans2         = 0x32
	cmdTreeDisconnect = 0x71
	cmdNegotiate      = 0x72
	cmdSessionSetup   = 0x73
	cmdLogoff         = 0x74
	cmdTreeConnect    = 0x75
	cmdReadAndX       = 0x2e
	cmdWriteAndX      = 0x2f
	cmdNTCreate       = 0xa2
)

// Conn is one SMB1 connection with at most one session and one tree.
// It is not safe for concurrent use.
type Conn struct {
	conn    net.Conn
	uid     uint16
	tid     uint16
	mid     uint16
	maxBuf  int  // the server's MaxBufferSize
	guest   bool // the session was logged on as guest
	neg     NegotiateResponse
	id      *ntlm.Identity // what the server told in its CHALLENGE
	timeout time.Duration  // per request when ctx has no deadline
	// signKey is set once the session signs (the server requires it):
	// every request then carries a MAC with sequence number seq.
	signKey []byte
	seq     uint32
}

// NegotiateResponse is the part of the server's NEGOTIATE answer the
// replay uses.
type NegotiateResponse struct {
	Status       uint32
	DialectIndex int // -1: no dialect accepted
	SecurityMode byte
	MaxBuffer    uint32
	Capabilities uint32
	ExtendedSec  bool
	Challenge    []byte // non-extended security only
	Blob         []byte // extended security: the SPNEGO init token (may be empty)
}

const capExtendedSecurity = 0x80000000

// parseNegotiateResponse decodes an NT LM 0.12 NEGOTIATE response.
func parseNegotiateResponse(b []byte) (NegotiateResponse, error) {
	var n NegotiateResponse
	words, data, err := parse(b, cmdNegotiate)
	if err != nil {
		return n, fmt.Errorf("SMB1 negotiate response: %w", err)
	}
	n.Status = binary.LittleEndian.Uint32(b[5:])
	n.DialectIndex = -1
	if len(words) < 2 {
		return n, nil
	}
	if idx := binary.LittleEndian.Uint16(words); idx != 0xffff {
		n.DialectIndex = int(idx)
	}
	if n.DialectIndex < 0 {
		return n, nil
	}
	if len(words) < 34 {
		return n, fmt.Errorf("SMB1 negotiate response: %d parameter bytes, want 34 for NT LM 0.12", len(words))
	}
	n.SecurityMode = words[2]
	n.MaxBuffer = binary.LittleEndian.Uint32(words[7:])
	n.Capabilities = binary.LittleEndian.Uint32(words[19:])
	n.ExtendedSec = n.Capabilities&capExtendedSecurity != 0
	chLen := int(words[33])
	if n.ExtendedSec {
		if len(data) < 16 {
			return n, errors.New("SMB1 negotiate response: no server GUID")
		}
		n.Blob = data[16:]
	} else {
		if chLen > len(data) {
			return n, fmt.Errorf("SMB1 negotiate response: challenge of %d bytes overruns %d", chLen, len(data))
		}
		n.Challenge = data[:chLen]
	}
	return n, nil
}

// parse checks an SMB1 response's header and command and returns its
// parameter words and data bytes.
func parse(b []byte, cmd byte) (words, data []byte, err error) {
	if len(b) < 35 || string(b[:4]) != "\xffSMB" {
		return nil, nil, fmt.Errorf("%d bytes, not an SMB1 message", len(b))
	}
	if b[4] != cmd {
		return nil, nil, fmt.Errorf("command 0x%02x, want 0x%02x", b[4], cmd)
	}
	wc := int(b[32])
	if 33+2*wc+2 > len(b) {
		return nil, nil, fmt.Errorf("word count %d overruns the %d-byte message", wc, len(b))
	}
	words = b[33 : 33+2*wc]
	bc := int(binary.LittleEndian.Uint16(b[33+2*wc:]))
	start := 33 + 2*wc + 2
	if start+bc > len(b) {
		return nil, nil, fmt.Errorf("byte count %d overruns the %d-byte message", bc, len(b))
	}
	return words, b[start : start+bc], nil
}

func statusOf(b []byte) ntstatus.Status { return ntstatus.Status(binary.LittleEndian.Uint32(b[5:])) }

// request builds a request of cmd with parameter words and data bytes.
// Data that must be 2-aligned from the header start (Unicode strings) is
// given with align set; the pad byte is added here.
func (c *Conn) request(cmd byte, words []byte, data []byte, align bool) []byte {
	h := smbwire.SMB1Header(cmd)
	binary.LittleEndian.PutUint16(h[24:], c.tid)
	binary.LittleEndian.PutUint16(h[28:], c.uid)
	c.mid++
	binary.LittleEndian.PutUint16(h[30:], c.mid)
	b := append(h, byte(len(words)/2))
	b = append(b, words...)
	if align && (len(b)+2)%2 == 1 {
		data = append([]byte{0}, data...)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	b = append(b, data...)
	if c.signKey != nil {
		sign(b, c.signKey, c.seq)
		c.seq += 2 // the answer takes the next number
	}
	return b
}

// sign puts the MAC of an SMB1 message in its security signature
// field: the first 8 bytes of MD5(key, message with the sequence number in
// that field) [MS-SMB 3.1.4.1].
func sign(b, key []byte, seq uint32) {
	binary.LittleEndian.PutUint16(b[10:], binary.LittleEndian.Uint16(b[10:])|0x0004)
	clear(b[14:22])
	binary.LittleEndian.PutUint32(b[14:], seq)
	h := md5.New()
	h.Write(key)
	h.Write(b)
	copy(b[14:22], h.Sum(nil)[:8])
}

// roundTrip sends msg and reads the answer to it, within ctx.
func (c *Conn) roundTrip(ctx context.Context, msg []byte) ([]byte, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(c.timeout)
	}
	c.conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := smbwire.WriteFrame(c.conn, msg); err != nil {
		return nil, err
	}
	mid := binary.LittleEndian.Uint16(msg[30:])
	for range 16 {
		resp, err := smbwire.ReadFrame(c.conn)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%w: %w", err, ctx.Err())
			}
			return nil, err
		}
		if len(resp) < 32 || string(resp[:4]) != "\xffSMB" {
			return nil, fmt.Errorf("answer is not SMB1 (% x)", resp[:min(len(resp), 8)])
		}
		if binary.LittleEndian.Uint16(resp[30:]) != mid || resp[4] != msg[4] {
			continue // an oplock break or a late answer: not ours
		}
		return resp, nil
	}
	return nil, errors.New("no answer to the request among 16 server messages")
}

// call sends a request and returns its words and data when the status is
// success (or MORE_PROCESSING_REQUIRED); otherwise the status as error.
func (c *Conn) call(ctx context.Context, cmd byte, words, data []byte, align bool) (resp, rw, rd []byte, err error) {
	resp, err = c.roundTrip(ctx, c.request(cmd, words, data, align))
	if err != nil {
		return nil, nil, nil, err
	}
	st := statusOf(resp)
	if st != ntstatus.Success && st != ntstatus.MoreProcessingRequired {
		return resp, nil, nil, st
	}
	rw, rd, err = parse(resp, cmd)
	if err != nil {
		return resp, nil, nil, fmt.Errorf("SMB1 answer to 0x%02x: %w", cmd, err)
	}
	return resp, rw, rd, nil
}

// NewConn is an SMB1 client over conn, already connected (and for TCP 139
// with its NetBIOS session set up). timeout bounds each request whose
// context has no deadline.
func NewConn(conn net.Conn, timeout time.Duration) *Conn {
	return &Conn{conn: conn, tid: 0xffff, timeout: timeout}
}

// Negotiate offers NT LM 0.12 alone, as an SMB1-only MFP does; a server
// that refuses it gives an error wrapping smbwire.ErrNoSMB1.
func (c *Conn) Negotiate(ctx context.Context) error {
	resp, err := c.roundTrip(ctx, smbwire.SMB1NegotiateRequest([]string{Dialect}))
	if err != nil {
		if smbwire.IsPeerClose(err) {
			return fmt.Errorf("SMB1 negotiate: server hung up: %w", smbwire.ErrNoSMB1)
		}
		return fmt.Errorf("SMB1 negotiate: %w", err)
	}
	n, err := parseNegotiateResponse(resp)
	if err != nil {
		return err
	}
	if n.Status != 0 || n.DialectIndex != 0 {
		return fmt.Errorf("SMB1 negotiate: status 0x%08X, dialect index %d: %w", n.Status, n.DialectIndex, smbwire.ErrNoSMB1)
	}
	c.neg = n
	c.maxBuf = int(n.MaxBuffer)
	return nil
}

// Negotiated is the server's NEGOTIATE answer (zero before Negotiate
// succeeded).
func (c *Conn) Negotiated() NegotiateResponse { return c.neg }

// SigningEnabled reports whether the server offers SMB1 signing.
func (n NegotiateResponse) SigningEnabled() bool {
	return n.SecurityMode&smbwire.SMB1SigningEnabled != 0
}

// SigningRequired reports whether the server requires SMB1 signing.
func (n NegotiateResponse) SigningRequired() bool {
	return n.SecurityMode&smbwire.SMB1SigningRequired != 0
}
