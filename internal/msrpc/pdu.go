// Package msrpc is the small part of DCE/RPC (connection-oriented, over an
// SMB named pipe, NDR little-endian, no RPC-level authentication: the SMB
// session is the caller's identity) that reading a Windows event log
// (MS-EVEN, \pipe\eventlog), a share's use count (MS-SRVS, \pipe\srvsvc)
// and a DFS link's targets (MS-DFSNM, \pipe\netdfs) need. Every decoder
// takes bytes a server sent and refuses what does not add up, with an
// error; none panics (fuzzed).
package msrpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// PDU types [C706 12.6.4].
const (
	ptypeRequest  = 0
	ptypeResponse = 2
	ptypeFault    = 3
	ptypeBind     = 11
	ptypeBindAck  = 12
	ptypeBindNak  = 13
)

const (
	flagFirst  = 0x01
	flagLast   = 0x02
	headerSize = 16
	// MaxFrag is the fragment size offered in the bind (and the most a
	// server's fragment may be).
	MaxFrag = 4280
	// maxStub bounds one reassembled response.
	maxStub = 1 << 20
)

// UUID is an interface or transfer syntax id, as written
// ("82273fdc-e32a-18c3-3f78-827929dc23ea").
type UUID [16]byte

// ParseUUID reads the textual form.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("uuid %q: not 8-4-4-4-12 hex digits", s)
	}
	hex := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	var raw [16]byte
	for i := 0; i < 16; i++ {
		var b byte
		for _, c := range hex[2*i : 2*i+2] {
			b <<= 4
			switch {
			case c >= '0' && c <= '9':
				b |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				b |= byte(c - 'a' + 10)
			case c >= 'A' && c <= 'F':
				b |= byte(c - 'A' + 10)
			default:
				return u, fmt.Errorf("uuid %q: not hex", s)
			}
		}
		raw[i] = b
	}
	// The first three fields go little-endian on the wire.
	u[0], u[1], u[2], u[3] = raw[3], raw[2], raw[1], raw[0]
	u[4], u[5] = raw[5], raw[4]
	u[6], u[7] = raw[7], raw[6]
	copy(u[8:], raw[8:])
	return u, nil
}

func mustUUID(s string) UUID {
	u, err := ParseUUID(s)
	if err != nil {
		panic(err)
	}
	return u
}

// Interface is an RPC interface: its id and version.
type Interface struct {
	UUID         UUID
	Major, Minor uint16
}

var ndr = Interface{mustUUID("8a885d04-1ceb-11c9-9fe8-08002b104860"), 2, 0}

// Fault is a call the server refused with an rpc fault (nca status).
type Fault struct{ Status uint32 }

func (f *Fault) Error() string {
	switch f.Status {
	case 0x00000005:
		return "rpc fault: access denied"
	case 0x1C010002:
		return "rpc fault: operation out of range"
	case 0x1C010003:
		return "rpc fault: unknown interface"
	case 0x000006F7:
		return "rpc fault: bad stub data"
	}
	return fmt.Sprintf("rpc fault 0x%08x", f.Status)
}

// ErrBindRefused: the server does not offer the interface on this pipe.
var ErrBindRefused = errors.New("rpc bind refused")

func header(ptype byte, flags byte, fragLen int, callID uint32) []byte {
	h := make([]byte, headerSize, fragLen)
	h[0], h[1], h[2], h[3] = 5, 0, ptype, flags
	h[4] = 0x10 // little-endian integers, ASCII, IEEE floats
	binary.LittleEndian.PutUint16(h[8:], uint16(fragLen))
	binary.LittleEndian.PutUint32(h[12:], callID)
	return h
}

// BindPDU is the bind for iface with one presentation context (id 0, NDR).
func BindPDU(iface Interface, callID uint32) []byte {
	const size = headerSize + 8 + 4 + 44
	b := header(ptypeBind, flagFirst|flagLast, size, callID)
	b = binary.LittleEndian.AppendUint16(b, MaxFrag)
	b = binary.LittleEndian.AppendUint16(b, MaxFrag)
	b = binary.LittleEndian.AppendUint32(b, 0) // assoc group
	b = append(b, 1, 0, 0, 0)                  // one context
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = append(b, 1, 0) // one transfer syntax
	b = append(b, iface.UUID[:]...)
	b = binary.LittleEndian.AppendUint16(b, iface.Major)
	b = binary.LittleEndian.AppendUint16(b, iface.Minor)
	b = append(b, ndr.UUID[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(ndr.Major))
	return b
}

// RequestPDU is one call of opnum with its NDR stub (one fragment: our
// requests are small).
func RequestPDU(opnum uint16, stub []byte, callID uint32) ([]byte, error) {
	size := headerSize + 8 + len(stub)
	if size > MaxFrag {
		return nil, fmt.Errorf("rpc request of %d bytes: more than one fragment", size)
	}
	b := header(ptypeRequest, flagFirst|flagLast, size, callID)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(stub)))
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, opnum)
	return append(b, stub...), nil
}

// pdu is one fragment as read.
type pdu struct {
	ptype  byte
	flags  byte
	callID uint32
	body   []byte // after the common header, without auth trailer
}

// parsePDU checks a fragment's common header.
func parsePDU(b []byte) (pdu, error) {
	if len(b) < headerSize {
		return pdu{}, fmt.Errorf("rpc fragment of %d bytes: shorter than its header", len(b))
	}
	if b[0] != 5 || b[1] != 0 {
		return pdu{}, fmt.Errorf("rpc version %d.%d: not 5.0", b[0], b[1])
	}
	if b[4]&0xF0 != 0x10 {
		return pdu{}, errors.New("rpc fragment: big-endian data representation is not supported")
	}
	fl := int(binary.LittleEndian.Uint16(b[8:]))
	al := int(binary.LittleEndian.Uint16(b[10:]))
	if fl != len(b) {
		return pdu{}, fmt.Errorf("rpc fragment length %d, got %d bytes", fl, len(b))
	}
	end := fl
	if al > 0 {
		end = fl - al - 8
		if end < headerSize {
			return pdu{}, fmt.Errorf("rpc auth length %d: longer than the fragment", al)
		}
	}
	return pdu{ptype: b[2], flags: b[3], callID: binary.LittleEndian.Uint32(b[12:]), body: b[headerSize:end]}, nil
}

// ParseBindAck says whether a bind was accepted for its one context.
func ParseBindAck(b []byte, callID uint32) error {
	p, err := parsePDU(b)
	if err != nil {
		return fmt.Errorf("bind ack: %w", err)
	}
	if p.callID != callID {
		return fmt.Errorf("bind ack: call id %d, want %d", p.callID, callID)
	}
	switch p.ptype {
	case ptypeBindNak:
		return ErrBindRefused
	case ptypeBindAck:
	default:
		return fmt.Errorf("bind ack: pdu type %d", p.ptype)
	}
	body := p.body
	if len(body) < 10 {
		return errors.New("bind ack: truncated")
	}
	sec := int(binary.LittleEndian.Uint16(body[8:]))
	off := 10 + sec
	off += (4 - (headerSize+off)%4) % 4 // align to 4 from the fragment's start
	if off+4+24 > len(body) {
		return errors.New("bind ack: truncated result list")
	}
	if body[off] < 1 {
		return errors.New("bind ack: no result")
	}
	if result := binary.LittleEndian.Uint16(body[off+4:]); result != 0 {
		return fmt.Errorf("%w (result %d, reason %d)", ErrBindRefused, result, binary.LittleEndian.Uint16(body[off+6:]))
	}
	return nil
}

// Conn is a bound interface on a pipe: calls go one at a time.
type Conn struct {
	rw     io.ReadWriter
	callID uint32
	buf    []byte // read but not yet used
}

// Bind binds iface on rw (an open named pipe).
func Bind(rw io.ReadWriter, iface Interface) (*Conn, error) {
	c := &Conn{rw: rw, callID: 1}
	if _, err := rw.Write(BindPDU(iface, c.callID)); err != nil {
		return nil, fmt.Errorf("rpc bind: %w", err)
	}
	frag, err := c.readFrag()
	if err != nil {
		return nil, fmt.Errorf("rpc bind: %w", err)
	}
	if err := ParseBindAck(frag, c.callID); err != nil {
		return nil, err
	}
	return c, nil
}

// Call sends opnum's request stub and returns the response stub.
func (c *Conn) Call(opnum uint16, stub []byte) ([]byte, error) {
	c.callID++
	req, err := RequestPDU(opnum, stub, c.callID)
	if err != nil {
		return nil, err
	}
	if _, err := c.rw.Write(req); err != nil {
		return nil, fmt.Errorf("rpc call %d: %w", opnum, err)
	}
	var out []byte
	for {
		frag, err := c.readFrag()
		if err != nil {
			return nil, fmt.Errorf("rpc call %d: %w", opnum, err)
		}
		stub, last, err := ParseResponse(frag, c.callID)
		if err != nil {
			return nil, fmt.Errorf("rpc call %d: %w", opnum, err)
		}
		if len(out)+len(stub) > maxStub {
			return nil, fmt.Errorf("rpc call %d: response over %d bytes", opnum, maxStub)
		}
		out = append(out, stub...)
		if last {
			return out, nil
		}
	}
}

// ParseResponse returns one response fragment's stub and whether it is the
// last; a fault is a *Fault.
func ParseResponse(b []byte, callID uint32) (stub []byte, last bool, err error) {
	p, err := parsePDU(b)
	if err != nil {
		return nil, false, err
	}
	if p.callID != callID {
		return nil, false, fmt.Errorf("response to call %d, want %d", p.callID, callID)
	}
	switch p.ptype {
	case ptypeFault:
		if len(p.body) < 12 {
			return nil, false, errors.New("rpc fault: truncated")
		}
		return nil, false, &Fault{binary.LittleEndian.Uint32(p.body[8:])}
	case ptypeResponse:
	default:
		return nil, false, fmt.Errorf("pdu type %d where a response was due", p.ptype)
	}
	if len(p.body) < 8 {
		return nil, false, errors.New("response: truncated")
	}
	return p.body[8:], p.flags&flagLast != 0, nil
}

// readFrag reads one whole fragment from the pipe (a pipe read may give
// part of one, or more).
func (c *Conn) readFrag() ([]byte, error) {
	chunk := make([]byte, MaxFrag)
	for empty := 0; ; {
		if len(c.buf) >= headerSize {
			fl := int(binary.LittleEndian.Uint16(c.buf[8:]))
			if fl < headerSize || fl > MaxFrag*16 {
				return nil, fmt.Errorf("rpc fragment length %d", fl)
			}
			if len(c.buf) >= fl {
				frag := c.buf[:fl:fl]
				c.buf = c.buf[fl:]
				return frag, nil
			}
		}
		n, err := c.rw.Read(chunk)
		c.buf = append(c.buf, chunk[:n]...)
		if err != nil && n == 0 {
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if n == 0 {
			if empty++; empty > 3 {
				return nil, io.ErrNoProgress
			}
		}
	}
}
