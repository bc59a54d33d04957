package smbcheck

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

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// ServerInfo is what the negotiate probe learned.
type ServerInfo struct {
	// SMB1 is true when the server accepted an SMB1 (NT LM 0.12) negotiate.
	SMB1 bool `json:"smb1"`
	// SMB2 is true when the server speaks SMB2 or later.
	SMB2 bool `json:"smb2"`
	// Dialect is the highest SMB2/3 dialect the server chose ("3.1.1"), or
	// "NT LM 0.12" for an SMB1-only server.
	Dialect         string `json:"dialect"`
	SigningEnabled  bool   `json:"signing_enabled"`
	SigningRequired bool   `json:"signing_required"`
	// From the NTLM CHALLENGE's target info.
	NetBIOSComputer string `json:"netbios_computer,omitempty"`
	NetBIOSDomain   string `json:"netbios_domain,omitempty"`
	DNSComputer     string `json:"dns_computer,omitempty"`
	DNSDomain       string `json:"dns_domain,omitempty"`
	DNSForest       string `json:"dns_forest,omitempty"`
	// OSVersion is the Windows version from the CHALLENGE ("10.0.22631"),
	// "" when the server does not give a real one (Samba sends build 0).
	OSVersion string `json:"os_version,omitempty"`
	// Windows is the edition guessed from the build ("Windows 11 23H2").
	Windows string `json:"windows,omitempty"`
	// ClientEdition is true when the build exists only as a Windows client
	// (10/11), whose Server service allows 20 inbound sessions.
	ClientEdition bool `json:"client_edition,omitempty"`
}

// DomainJoined reports whether the server belongs to a domain: its NetBIOS
// domain differs from its own name.
func (s *ServerInfo) DomainJoined() bool {
	return s.NetBIOSDomain != "" && !strings.EqualFold(s.NetBIOSDomain, s.NetBIOSComputer)
}

// maxFrame bounds what the probe reads from a server.
const maxFrame = 1 << 16

var errNoSMB1 = errors.New("the server refused every SMB1 dialect")

// errNotSMB marks a peer that answered the negotiate in another protocol,
// or hung up on it without a word of SMB.
var errNotSMB = errors.New("not an SMB server")

// probe runs the negotiate probe over conn (already connected; for port 139
// the NetBIOS session is set up here). smb1Only offers only SMB1, as an
// SMB1-only MFP does.
func probe(ctx context.Context, conn net.Conn, port int, host string, smb1Only bool) (*ServerInfo, error) {
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
		defer conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if port == 139 {
		if err := nbssSessionRequest(conn, host); err != nil {
			return nil, err
		}
	}
	dialects := []string{"NT LM 0.12", "SMB 2.002", "SMB 2.???"}
	if smb1Only {
		dialects = dialects[:1]
	}
	if err := writeFrame(conn, smb1NegotiateRequest(dialects)); err != nil {
		return nil, fmt.Errorf("send SMB1 negotiate: %w", err)
	}
	resp, err := readFrame(conn)
	if err != nil {
		if smb1Only && isPeerClose(err) {
			return nil, fmt.Errorf("SMB1 negotiate: server hung up: %w", errNoSMB1)
		}
		if isPeerClose(err) {
			// An SMB server answers this negotiate (SMB2 servers too).
			return nil, fmt.Errorf("negotiate: the server hung up without an SMB answer (%w): %w", err, errNotSMB)
		}
		return nil, fmt.Errorf("SMB1 negotiate: %w", err)
	}
	info := &ServerInfo{}
	switch {
	case bytes.HasPrefix(resp, []byte("\xfeSMB")):
		n, err := parseSMB2Negotiate(resp)
		if err != nil {
			return nil, err
		}
		info.SMB2 = true
		if n.Dialect == 0x02ff {
			return info, smb2Dance(conn, info, 1)
		}
		n.apply(info)
		return info, ntlmOverSMB2(conn, info, 1)
	case bytes.HasPrefix(resp, []byte("\xffSMB")):
		n, err := parseSMB1Negotiate(resp)
		if err != nil {
			return nil, err
		}
		if n.Status != 0 || n.DialectIndex < 0 || n.DialectIndex >= len(dialects) {
			return nil, fmt.Errorf("SMB1 negotiate: status 0x%08X, dialect index %d: %w", n.Status, n.DialectIndex, errNoSMB1)
		}
		info.SMB1 = true
		info.Dialect = dialects[n.DialectIndex]
		info.SigningEnabled = n.SecurityMode&0x04 != 0
		info.SigningRequired = n.SecurityMode&0x08 != 0
		if n.ExtendedSecurity {
			// Target info over SMB1 is a bonus: a failure here does not
			// change what was learned.
			_ = ntlmOverSMB1(conn, info)
		}
		return info, nil
	default:
		return nil, fmt.Errorf("negotiate: the server answered something that is not SMB (% x): %w", head(resp, 8), errNotSMB)
	}
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

func isPeerClose(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// smb2Dance sends the real SMB2 NEGOTIATE after a multi-protocol one.
func smb2Dance(conn net.Conn, info *ServerInfo, msgID uint64) error {
	if err := writeFrame(conn, smb2NegotiateRequest(msgID)); err != nil {
		return fmt.Errorf("send SMB2 negotiate: %w", err)
	}
	resp, err := readFrame(conn)
	if err != nil {
		return fmt.Errorf("SMB2 negotiate: %w", err)
	}
	n, err := parseSMB2Negotiate(resp)
	if err != nil {
		return err
	}
	if n.Status != 0 {
		return fmt.Errorf("SMB2 negotiate: %w", n.Status)
	}
	n.apply(info)
	return ntlmOverSMB2(conn, info, msgID+1)
}

func ntlmOverSMB2(conn net.Conn, info *ServerInfo, msgID uint64) error {
	if err := writeFrame(conn, smb2SessionSetupRequest(msgID, ntlm.SPNEGOInit(ntlm.Negotiate()))); err != nil {
		return fmt.Errorf("send session setup: %w", err)
	}
	resp, err := readFrame(conn)
	if err != nil {
		return fmt.Errorf("session setup: %w", err)
	}
	status, blob, err := parseSMB2SessionSetup(resp)
	if err != nil {
		return err
	}
	if status != ntstatus.MoreProcessingRequired {
		return fmt.Errorf("session setup (NTLM negotiate): %w", status)
	}
	c, err := ntlm.ParseIdentity(blob)
	if err != nil {
		return err
	}
	applyIdentity(c, info)
	return nil
}

func ntlmOverSMB1(conn net.Conn, info *ServerInfo) error {
	if err := writeFrame(conn, smb1SessionSetupRequest(ntlm.SPNEGOInit(ntlm.Negotiate()))); err != nil {
		return err
	}
	resp, err := readFrame(conn)
	if err != nil {
		return err
	}
	status, blob, err := parseSMB1SessionSetup(resp)
	if err != nil {
		return err
	}
	if status != ntstatus.MoreProcessingRequired {
		return status
	}
	c, err := ntlm.ParseIdentity(blob)
	if err != nil {
		return err
	}
	applyIdentity(c, info)
	return nil
}

// --- framing -----------------------------------------------------------

func writeFrame(w io.Writer, msg []byte) error {
	if len(msg) >= 1<<24 {
		return errors.New("frame too large")
	}
	b := make([]byte, 4+len(msg))
	b[1], b[2], b[3] = byte(len(msg)>>16), byte(len(msg)>>8), byte(len(msg))
	copy(b[4:], msg)
	_, err := w.Write(b)
	return err
}

// readFrame reads one direct-TCP / NBSS session message, skipping NBSS
// keep-alives, and refuses frames larger than maxFrame.
func readFrame(r io.Reader) ([]byte, error) {
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
			return nil, fmt.Errorf("unexpected NetBIOS message type 0x%02x (% x): %w", h[0], h[:], errNotSMB)
		}
		if n > maxFrame {
			return nil, fmt.Errorf("server frame of %d bytes exceeds the probe's limit of %d", n, maxFrame)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return nil, errors.New("server sent only keep-alives")
}

// nbssSessionRequest opens a NetBIOS session (TCP 139) to the file server
// service, calling it by its NetBIOS name or *SMBSERVER.
func nbssSessionRequest(conn net.Conn, host string) error {
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
		return fmt.Errorf("NetBIOS session request: unexpected answer 0x%02x: %w", h[0], errNotSMB)
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

func smb1Header(cmd byte) []byte {
	h := make([]byte, 32)
	copy(h, "\xffSMB")
	h[4] = cmd
	h[9] = 0x18                                   // case-insensitive, canonical paths
	binary.LittleEndian.PutUint16(h[10:], 0xc801) // unicode, NT status, extended security, long names
	binary.LittleEndian.PutUint16(h[24:], 0xffff) // TID
	binary.LittleEndian.PutUint16(h[26:], 0xfeff) // PID
	return h
}

func smb1NegotiateRequest(dialects []string) []byte {
	var body []byte
	for _, d := range dialects {
		body = append(body, 0x02)
		body = append(body, d...)
		body = append(body, 0)
	}
	b := smb1Header(0x72)
	b = append(b, 0) // WordCount
	b = binary.LittleEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

type smb1Negotiate struct {
	Status           uint32
	DialectIndex     int
	SecurityMode     byte
	ExtendedSecurity bool
}

func parseSMB1Negotiate(b []byte) (smb1Negotiate, error) {
	var n smb1Negotiate
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

func smb1SessionSetupRequest(blob []byte) []byte {
	b := smb1Header(0x73)
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
	tail = append(tail, utf16z("Unix")...)
	tail = append(tail, utf16z("scanwarden")...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(tail)))
	return append(b, tail...)
}

func utf16z(s string) []byte {
	var out []byte
	for _, u := range utf16.Encode([]rune(s)) {
		out = binary.LittleEndian.AppendUint16(out, u)
	}
	return append(out, 0, 0)
}

func parseSMB1SessionSetup(b []byte) (ntstatus.Status, []byte, error) {
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

func smb2Header(cmd uint16, msgID uint64) []byte {
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

func smb2NegotiateRequest(msgID uint64) []byte {
	b := smb2Header(0, msgID)
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

type smb2Negotiate struct {
	Status       ntstatus.Status
	Dialect      uint16
	SecurityMode uint16
}

func (n smb2Negotiate) apply(info *ServerInfo) {
	info.Dialect = dialectName(n.Dialect)
	info.SigningEnabled = n.SecurityMode&0x01 != 0
	info.SigningRequired = n.SecurityMode&0x02 != 0
}

func dialectName(d uint16) string {
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
	case 0x02ff:
		return "2.x"
	}
	return fmt.Sprintf("0x%04x", d)
}

func parseSMB2Header(b []byte, cmd uint16) (status ntstatus.Status, body []byte, err error) {
	if len(b) < 64 || !bytes.HasPrefix(b, []byte("\xfeSMB")) {
		return 0, nil, fmt.Errorf("SMB2 response: %d bytes, not an SMB2 header", len(b))
	}
	if got := binary.LittleEndian.Uint16(b[12:]); got != cmd {
		return 0, nil, fmt.Errorf("SMB2 response: command %d, want %d", got, cmd)
	}
	return ntstatus.Status(binary.LittleEndian.Uint32(b[8:])), b[64:], nil
}

func parseSMB2Negotiate(b []byte) (smb2Negotiate, error) {
	var n smb2Negotiate
	status, body, err := parseSMB2Header(b, 0)
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

func smb2SessionSetupRequest(msgID uint64, blob []byte) []byte {
	b := smb2Header(1, msgID)
	b = binary.LittleEndian.AppendUint16(b, 25)
	b = append(b, 0, 1) // flags, security mode: signing enabled
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 64+24)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(blob)))
	b = binary.LittleEndian.AppendUint64(b, 0)
	return append(b, blob...)
}

func parseSMB2SessionSetup(b []byte) (ntstatus.Status, []byte, error) {
	status, body, err := parseSMB2Header(b, 1)
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

// applyIdentity fills info with what the server told about itself in its
// NTLM CHALLENGE.
func applyIdentity(c ntlm.Identity, info *ServerInfo) {
	info.NetBIOSComputer = c.AV[1]
	info.NetBIOSDomain = c.AV[2]
	info.DNSComputer = c.AV[3]
	info.DNSDomain = c.AV[4]
	info.DNSForest = c.AV[5]
	if info.NetBIOSDomain == "" {
		info.NetBIOSDomain = c.TargetName
	}
	if c.HasVersion && c.Build != 0 {
		info.OSVersion = fmt.Sprintf("%d.%d.%d", c.Major, c.Minor, c.Build)
		info.Windows, info.ClientEdition = windowsEdition(c.Major, c.Minor, c.Build)
	}
}

// windowsEdition names a Windows build from the NTLM version fields.
func windowsEdition(major, minor byte, build uint16) (string, bool) {
	w := JudgeWindows("", major, minor, int(build))
	return w.Name, w.Client
}
