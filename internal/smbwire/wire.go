// Package smbwire is the SMB wire below smbcheck's diagnosis: the
// direct-TCP and NetBIOS framing, the SMB1 and SMB2 NEGOTIATE and SESSION
// SETUP messages and the negotiate probe that sends them (Probe), the
// Sniffer that reads an SMB2 logon along under the SMB library and holds
// its NTLM AUTHENTICATE, and the Stamper that gives the canary's CREATE
// delete-on-close and signs it again. It knows messages and keys, not
// causes: what a server's answer means is smbcheck's business.
package smbwire

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
	"unicode/utf16"

	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// MaxFrame bounds what the probe reads from a server.
const MaxFrame = 1 << 16

// ErrNotSMB marks a peer that answered the negotiate in another protocol,
// or hung up on it without a word of SMB.
var ErrNotSMB = errors.New("not an SMB server")

// IsPeerClose reports whether err is the server hanging up: the stream
// ended, or the connection was reset.
func IsPeerClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// --- framing -----------------------------------------------------------

func WriteFrame(w io.Writer, msg []byte) error {
	if len(msg) >= 1<<24 {
		return errors.New("frame too large")
	}
	b := make([]byte, 4+len(msg))
	b[1], b[2], b[3] = byte(len(msg)>>16), byte(len(msg)>>8), byte(len(msg))
	copy(b[4:], msg)
	_, err := w.Write(b)
	return err
}

// ReadFrame reads one direct-TCP / NBSS session message, skipping NBSS
// keep-alives, and refuses frames larger than MaxFrame.
func ReadFrame(r io.Reader) ([]byte, error) {
	for range 8 {
		var h [4]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, err
		}
		n := int(h[1])<<16 | int(h[2])<<8 | int(h[3])
		if h[0] == 0x85 && n == 0 { // NBSS keep-alive
			continue
		}
		if h[0] != 0 {
			return nil, fmt.Errorf("unexpected NetBIOS message type 0x%02x (% x): %w", h[0], h[:], ErrNotSMB)
		}
		if n > MaxFrame {
			return nil, fmt.Errorf("server frame of %d bytes exceeds the probe's limit of %d", n, MaxFrame)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, errors.New("server sent only keep-alives")
}

// OpenTransport readies conn for SMB under ctx: ctx's deadline becomes
// conn's, ctx's end cuts it short, and on port 139 the NetBIOS session is
// set up (NBSSSessionRequest). The caller defers stop (returned even with
// an error), which ends the watch on ctx. Every client of this module
// opens its connection with it.
func OpenTransport(ctx context.Context, conn net.Conn, port int, host string) (stop func() bool, err error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	if port == 139 {
		if err := NBSSSessionRequest(conn, host); err != nil {
			return stop, err
		}
	}
	return stop, nil
}

// NBSSSessionRequest opens a NetBIOS session (TCP 139) to the file server
// service, calling it by its NetBIOS name or *SMBSERVER.
func NBSSSessionRequest(conn net.Conn, host string) error {
	called := "*SMBSERVER"
	if h := strings.ToUpper(strings.SplitN(host, ".", 2)[0]); net.ParseIP(host) == nil && h != "" && len(h) <= 15 {
		called = h
	}
	msg := []byte{0x81, 0, 0, 68}
	msg = append(msg, nbEncode(called, 0x20)...)
	msg = append(msg, nbEncode("SCANWARDEN", 0x00)...)
	if _, err := conn.Write(msg); err != nil {
		return fmt.Errorf("NetBIOS session request: %w", err)
	}
	var h [4]byte
	if _, err := io.ReadFull(conn, h[:]); err != nil {
		return fmt.Errorf("NetBIOS session request: %w", err)
	}
	switch h[0] {
	case 0x82:
		return nil
	case 0x83:
		var code [1]byte
		io.ReadFull(conn, code[:])
		if called != "*SMBSERVER" {
			return fmt.Errorf("NetBIOS session refused for called name %s (error 0x%02x)", called, code[0])
		}
		return fmt.Errorf("NetBIOS session refused (error 0x%02x)", code[0])
	default:
		return fmt.Errorf("NetBIOS session request: unexpected answer 0x%02x: %w", h[0], ErrNotSMB)
	}
}

// nbEncode is RFC 1001 first-level encoding of a 16-byte NetBIOS name.
func nbEncode(name string, suffix byte) []byte {
	var raw [16]byte
	copy(raw[:15], []byte(fmt.Sprintf("%-15s", name)))
	raw[15] = suffix
	out := make([]byte, 0, 34)
	out = append(out, 32)
	for _, c := range raw {
		out = append(out, 'A'+c>>4, 'A'+c&0x0f)
	}
	return append(out, 0)
}

// --- SMB1 --------------------------------------------------------------

func SMB1Header(cmd byte) []byte {
	h := make([]byte, 32)
	copy(h, "\xffSMB")
	h[4] = cmd
	h[9] = 0x18                                   // case-insensitive, canonical paths
	binary.LittleEndian.PutUint16(h[10:], 0xc801) // unicode, NT status, extended security, long names
	binary.LittleEndian.PutUint16(h[24:], 0xffff) // TID
	binary.LittleEndian.PutUint16(h[26:], 0xfeff) // PID
	return h
}

func SMB1NegotiateRequest(dialects []string) []byte {
	var body []byte
	for _, d := range dialects {
		body = append(body, 0x02)
		body = append(body, d...)
		body = append(body, 0)
	}
	b := SMB1Header(0x72)
	b = append(b, 0) // WordCount
	b = binary.LittleEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

type SMB1Negotiate struct {
	Status           uint32
	DialectIndex     int
	SecurityMode     byte
	ExtendedSecurity bool
}

// The SecurityMode bits of an SMB1 NEGOTIATE answer [MS-CIFS 2.2.4.52.2].
const (
	SMB1SigningEnabled  = 0x04 // NEGOTIATE_SECURITY_SIGNATURES_ENABLED
	SMB1SigningRequired = 0x08 // NEGOTIATE_SECURITY_SIGNATURES_REQUIRED
)

// SigningEnabled reports whether the server offers SMB1 signing.
func (n SMB1Negotiate) SigningEnabled() bool { return n.SecurityMode&SMB1SigningEnabled != 0 }

// SigningRequired reports whether the server requires SMB1 signing.
func (n SMB1Negotiate) SigningRequired() bool { return n.SecurityMode&SMB1SigningRequired != 0 }

func ParseSMB1Negotiate(b []byte) (SMB1Negotiate, error) {
	var n SMB1Negotiate
	if len(b) < 35 || !bytes.HasPrefix(b, []byte("\xffSMB")) {
		return n, fmt.Errorf("SMB1 negotiate response: %d bytes, too short", len(b))
	}
	if b[4] != 0x72 {
		return n, fmt.Errorf("SMB1 negotiate response: command 0x%02x", b[4])
	}
	n.Status = binary.LittleEndian.Uint32(b[5:])
	wc := int(b[32])
	if wc == 0 {
		n.DialectIndex = -1
		return n, nil
	}
	if len(b) < 33+2*wc || wc < 1 {
		return n, fmt.Errorf("SMB1 negotiate response: word count %d exceeds %d bytes", wc, len(b))
	}
	idx := binary.LittleEndian.Uint16(b[33:])
	n.DialectIndex = int(idx)
	if idx == 0xffff {
		n.DialectIndex = -1
		return n, nil
	}
	if wc >= 17 {
		n.SecurityMode = b[35]
		caps := binary.LittleEndian.Uint32(b[33+19:])
		n.ExtendedSecurity = caps&0x80000000 != 0
	}
	return n, nil
}

func SMB1SessionSetupRequest(blob []byte) []byte {
	b := SMB1Header(0x73)
	b = append(b, 12)                              // WordCount
	b = append(b, 0xff, 0, 0, 0)                   // no AndX
	b = binary.LittleEndian.AppendUint16(b, 16644) // MaxBufferSize
	b = binary.LittleEndian.AppendUint16(b, 50)    // MaxMpxCount
	b = binary.LittleEndian.AppendUint16(b, 0)     // VcNumber
	b = binary.LittleEndian.AppendUint32(b, 0)     // SessionKey
	b = binary.LittleEndian.AppendUint16(b, uint16(len(blob)))
	b = binary.LittleEndian.AppendUint32(b, 0)          // Reserved
	b = binary.LittleEndian.AppendUint32(b, 0x800000d4) // extended security, NT status, unicode, large files, NT SMBs
	var tail []byte
	tail = append(tail, blob...)
	if (len(b)+2+len(tail))%2 == 1 {
		tail = append(tail, 0)
	}
	tail = append(tail, UTF16Z("Unix")...)
	tail = append(tail, UTF16Z("scanwarden")...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(tail)))
	return append(b, tail...)
}

func UTF16Z(s string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		out = binary.LittleEndian.AppendUint16(out, u)
	}
	return append(out, 0, 0)
}

func ParseSMB1SessionSetup(b []byte) (ntstatus.Status, []byte, error) {
	if len(b) < 33 || !bytes.HasPrefix(b, []byte("\xffSMB")) || b[4] != 0x73 {
		return 0, nil, errors.New("SMB1 session setup response: malformed")
	}
	status := ntstatus.Status(binary.LittleEndian.Uint32(b[5:]))
	wc := int(b[32])
	if wc != 4 || len(b) < 33+8+2 {
		return status, nil, nil
	}
	blobLen := int(binary.LittleEndian.Uint16(b[33+6:]))
	start := 33 + 8 + 2
	if start+blobLen > len(b) {
		return status, nil, errors.New("SMB1 session setup response: security blob overruns the message")
	}
	return status, b[start : start+blobLen], nil
}

// --- SMB2 --------------------------------------------------------------

func SMB2Header(cmd uint16, msgID uint64) []byte {
	h := make([]byte, 64)
	copy(h, "\xfeSMB")
	binary.LittleEndian.PutUint16(h[4:], 64)
	binary.LittleEndian.PutUint16(h[12:], cmd)
	binary.LittleEndian.PutUint16(h[14:], 1) // credits requested
	binary.LittleEndian.PutUint64(h[24:], msgID)
	binary.LittleEndian.PutUint32(h[32:], 0xfeff) // process id
	return h
}

var probeDialects = []uint16{0x0202, 0x0210, 0x0300, 0x0302, 0x0311}

// SMB2NegotiateOne is an SMB2 NEGOTIATE (message 0) that offers one
// dialect below 3.1.1 alone: no negotiate contexts, signing enabled, no
// capabilities. Whether the server takes it tells its lowest dialect.
func SMB2NegotiateOne(dialect uint16) []byte {
	b := SMB2Header(0, 0)
	b = binary.LittleEndian.AppendUint16(b, 36)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 1) // signing enabled
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	guid := make([]byte, 16)
	rand.Read(guid)
	b = append(b, guid...)
	b = append(b, make([]byte, 8)...) // client start time (no contexts)
	return binary.LittleEndian.AppendUint16(b, dialect)
}

func SMB2NegotiateRequest(msgID uint64) []byte {
	b := SMB2Header(0, msgID)
	b = binary.LittleEndian.AppendUint16(b, 36)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(probeDialects)))
	b = binary.LittleEndian.AppendUint16(b, 1) // signing enabled
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0x44) // large MTU, encryption
	guid := make([]byte, 16)
	rand.Read(guid)
	b = append(b, guid...)
	ctxOffsetAt := len(b)
	b = append(b, make([]byte, 8)...) // context offset, count, reserved
	for _, d := range probeDialects {
		b = binary.LittleEndian.AppendUint16(b, d)
	}
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	binary.LittleEndian.PutUint32(b[ctxOffsetAt:], uint32(len(b)))
	binary.LittleEndian.PutUint16(b[ctxOffsetAt+4:], 2)
	// SMB2_PREAUTH_INTEGRITY_CAPABILITIES: SHA-512 and a salt.
	salt := make([]byte, 32)
	rand.Read(salt)
	pre := binary.LittleEndian.AppendUint16(nil, 1)
	pre = binary.LittleEndian.AppendUint16(pre, uint16(len(salt)))
	pre = binary.LittleEndian.AppendUint16(pre, 1) // SHA-512
	pre = append(pre, salt...)
	b = appendContext(b, 1, pre)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	// SMB2_ENCRYPTION_CAPABILITIES: AES-128-GCM, AES-128-CCM.
	enc := binary.LittleEndian.AppendUint16(nil, 2)
	enc = binary.LittleEndian.AppendUint16(enc, 2)
	enc = binary.LittleEndian.AppendUint16(enc, 1)
	return appendContext(b, 2, enc)
}

func appendContext(b []byte, typ uint16, data []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, typ)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	b = binary.LittleEndian.AppendUint32(b, 0)
	return append(b, data...)
}

type SMB2Negotiate struct {
	Status       ntstatus.Status
	Dialect      uint16
	SecurityMode uint16
}

// DialectWildcard is the dialect of an SMB2 answer to a multi-protocol
// NEGOTIATE ("SMB 2.???"): the client is to negotiate again in SMB2.
const DialectWildcard = 0x02ff

// SigningEnabled reports whether the server offers SMB2 signing.
func (n SMB2Negotiate) SigningEnabled() bool { return n.SecurityMode&0x01 != 0 }

// SigningRequired reports whether the server requires SMB2 signing.
func (n SMB2Negotiate) SigningRequired() bool { return n.SecurityMode&0x02 != 0 }

func DialectName(d uint16) string {
	switch d {
	case 0x0202:
		return "2.0.2"
	case 0x0210:
		return "2.1"
	case 0x0300:
		return "3.0"
	case 0x0302:
		return "3.0.2"
	case 0x0311:
		return "3.1.1"
	case DialectWildcard:
		return "2.x"
	}
	return fmt.Sprintf("0x%04x", d)
}

func ParseSMB2Header(b []byte, cmd uint16) (status ntstatus.Status, body []byte, err error) {
	if len(b) < 64 || !bytes.HasPrefix(b, []byte("\xfeSMB")) {
		return 0, nil, fmt.Errorf("SMB2 response: %d bytes, not an SMB2 header", len(b))
	}
	if got := binary.LittleEndian.Uint16(b[12:]); got != cmd {
		return 0, nil, fmt.Errorf("SMB2 response: command %d, want %d", got, cmd)
	}
	return ntstatus.Status(binary.LittleEndian.Uint32(b[8:])), b[64:], nil
}

func ParseSMB2Negotiate(b []byte) (SMB2Negotiate, error) {
	var n SMB2Negotiate
	status, body, err := ParseSMB2Header(b, 0)
	if err != nil {
		return n, fmt.Errorf("negotiate: %w", err)
	}
	n.Status = status
	if status != 0 {
		return n, nil
	}
	if len(body) < 64 {
		return n, fmt.Errorf("SMB2 negotiate response: body of %d bytes, too short", len(body))
	}
	n.SecurityMode = binary.LittleEndian.Uint16(body[2:])
	n.Dialect = binary.LittleEndian.Uint16(body[4:])
	return n, nil
}

func SMB2SessionSetupRequest(msgID uint64, blob []byte) []byte {
	b := SMB2Header(1, msgID)
	b = binary.LittleEndian.AppendUint16(b, 25)
	b = append(b, 0, 1) // flags, security mode: signing enabled
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 64+24)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(blob)))
	b = binary.LittleEndian.AppendUint64(b, 0)
	return append(b, blob...)
}

func ParseSMB2SessionSetup(b []byte) (ntstatus.Status, []byte, error) {
	status, body, err := ParseSMB2Header(b, 1)
	if err != nil {
		return 0, nil, fmt.Errorf("session setup: %w", err)
	}
	if status != ntstatus.MoreProcessingRequired && status != 0 {
		return status, nil, nil
	}
	if len(body) < 8 {
		return status, nil, errors.New("SMB2 session setup response: body too short")
	}
	off := int(binary.LittleEndian.Uint16(body[4:]))
	n := int(binary.LittleEndian.Uint16(body[6:]))
	if off < 64 || off-64+n > len(body) {
		return status, nil, fmt.Errorf("SMB2 session setup response: security buffer %d+%d outside the %d-byte message", off, n, len(b))
	}
	return status, body[off-64 : off-64+n], nil
}
