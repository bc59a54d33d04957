package msrpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
)

// enc builds an NDR stub (little-endian, 4-byte alignment from the stub's
// start).
type enc struct{ b []byte }

func (e *enc) align(n int) {
	for len(e.b)%n != 0 {
		e.b = append(e.b, 0)
	}
}

func (e *enc) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }

func (e *enc) u32(v uint32) {
	e.align(4)
	e.b = binary.LittleEndian.AppendUint32(e.b, v)
}

// counted writes an RPC_UNICODE_STRING (Length, MaximumLength, a unique
// pointer) and, right after it, its characters as a conformant varying
// array without a terminating NUL — the layout of a top-level [in]
// parameter.
func (e *enc) counted(s string) {
	u := utf16.Encode([]rune(s))
	e.align(4)
	e.u16(uint16(2 * len(u)))
	e.u16(uint16(2 * len(u)))
	if len(u) == 0 {
		e.u32(0)
		return
	}
	e.u32(0x00020000) // referent id
	e.chars(u)
}

// stringz writes a [string] wchar_t* as a conformant varying array with
// its terminating NUL.
func (e *enc) stringz(s string) {
	e.chars(append(utf16.Encode([]rune(s)), 0))
}

func (e *enc) chars(u []uint16) {
	e.u32(uint32(len(u)))
	e.u32(0)
	e.u32(uint32(len(u)))
	for _, c := range u {
		e.u16(c)
	}
	e.align(4)
}

// dec reads an NDR stub.
type dec struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("truncated")

func (d *dec) align(n int) {
	if r := d.off % n; r != 0 {
		d.off += n - r
	}
}

func (d *dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || d.off+n > len(d.b) {
		d.err = errShort
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

func (d *dec) u32() uint32 {
	d.align(4)
	p := d.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// werrBody reads the WERROR that ends a response (the stub's last four
// bytes) and returns a decoder over the body before it. A status other
// than success, or than one of also (statuses that still carry a full
// body), is a *WinError for op.
func werrBody(op string, stub []byte, also ...uint32) (dec, error) {
	if len(stub) < 4 {
		return dec{}, fmt.Errorf("%s: response of %d bytes: no status", op, len(stub))
	}
	body := len(stub) - 4
	if st := binary.LittleEndian.Uint32(stub[body:]); st != 0 && !slices.Contains(also, st) {
		return dec{}, &WinError{op, st}
	}
	return dec{b: stub[:body]}, nil
}

// utf16z decodes UTF-16LE up to the first NUL (or the end), and returns
// the bytes used including the NUL.
func utf16z(b []byte) (string, int) {
	var u []uint16
	i := 0
	for ; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			return string(utf16.Decode(u)), i + 2
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u)), len(b)
}

// maxChars bounds one string a server sends.
const maxChars = 1 << 15

// str reads a [string] wchar_t* referent: a conformant varying array
// (maximum count, offset, actual count, the characters), up to its NUL.
func (d *dec) str() string {
	max, off, actual := d.u32(), d.u32(), d.u32()
	if d.err != nil {
		return ""
	}
	if off != 0 || actual > max || max > maxChars {
		d.err = fmt.Errorf("a string of %d characters at offset %d in %d", actual, off, max)
		return ""
	}
	p := d.take(2 * int(actual))
	d.align(4)
	s, _ := utf16z(p)
	return s
}
