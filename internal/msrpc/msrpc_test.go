package msrpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

func TestParseUUID(t *testing.T) {
	u, err := ParseUUID("82273fdc-e32a-18c3-3f78-827929dc23ea")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xdc, 0x3f, 0x27, 0x82, 0x2a, 0xe3, 0xc3, 0x18, 0x3f, 0x78, 0x82, 0x79, 0x29, 0xdc, 0x23, 0xea}
	if !bytes.Equal(u[:], want) {
		t.Errorf("wire form % x", u[:])
	}
	for _, bad := range []string{"", "82273fdc-e32a-18c3-3f78-827929dc23e", "82273fdc-e32a-18c3-3f78-827929dc23eg", "82273fdcee32a-18c3-3f78-827929dc23ea"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestBindPDU(t *testing.T) {
	b := BindPDU(EventLog, 7)
	if len(b) != 72 || int(binary.LittleEndian.Uint16(b[8:])) != 72 || b[2] != ptypeBind || binary.LittleEndian.Uint32(b[12:]) != 7 {
		t.Fatalf("bind % x", b)
	}
	if !bytes.Equal(b[32:48], EventLog.UUID[:]) || !bytes.Equal(b[52:68], ndr.UUID[:]) {
		t.Errorf("syntaxes % x", b[28:])
	}
}

// bindAck is a server's acceptance (or not: result) of call id.
func bindAck(id uint32, result uint16) []byte {
	body := []byte{0xb8, 0x10, 0xb8, 0x10, 1, 0, 0, 0}
	body = binary.LittleEndian.AppendUint16(body, 13)
	body = append(body, []byte("\\PIPE\\ntsvcs\x00")...)
	for (headerSize+len(body))%4 != 0 {
		body = append(body, 0)
	}
	body = append(body, 1, 0, 0, 0)
	body = binary.LittleEndian.AppendUint16(body, result)
	body = binary.LittleEndian.AppendUint16(body, 0)
	body = append(body, ndr.UUID[:]...)
	body = binary.LittleEndian.AppendUint32(body, 2)
	h := header(ptypeBindAck, 3, headerSize+len(body), id)
	return append(h, body...)
}

func response(id uint32, flags byte, stub []byte) []byte {
	h := header(ptypeResponse, flags, headerSize+8+len(stub), id)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(stub)))
	h = append(h, 0, 0, 0, 0)
	return append(h, stub...)
}

func TestParseBindAck(t *testing.T) {
	if err := ParseBindAck(bindAck(1, 0), 1); err != nil {
		t.Fatal(err)
	}
	if err := ParseBindAck(bindAck(1, 2), 1); !errors.Is(err, ErrBindRefused) {
		t.Errorf("refused: %v", err)
	}
	if err := ParseBindAck(bindAck(2, 0), 1); err == nil {
		t.Error("another call's ack accepted")
	}
	nak := header(ptypeBindNak, 3, headerSize+2, 1)
	if err := ParseBindAck(append(nak, 0, 0), 1); !errors.Is(err, ErrBindRefused) {
		t.Errorf("nak: %v", err)
	}
}

// pipeFake is a named pipe that answers each written request with the
// next canned fragments, served in reads of at most chunk bytes.
type pipeFake struct {
	answers [][]byte
	out     bytes.Buffer
	chunk   int
}

func (p *pipeFake) Write(b []byte) (int, error) {
	if len(p.answers) == 0 {
		return 0, errors.New("no answer left")
	}
	p.out.Write(p.answers[0])
	p.answers = p.answers[1:]
	return len(b), nil
}

func (p *pipeFake) Read(b []byte) (int, error) {
	if p.out.Len() == 0 {
		return 0, io.EOF
	}
	if len(b) > p.chunk {
		b = b[:p.chunk]
	}
	return p.out.Read(b)
}

// A response in two fragments, read through a pipe that hands out 100
// bytes at a time, is put back together.
func TestCallReassembles(t *testing.T) {
	stub := bytes.Repeat([]byte{1, 2, 3, 4}, 100)
	two := append(response(2, flagFirst, stub[:200]), response(2, flagLast, stub[200:])...)
	p := &pipeFake{answers: [][]byte{bindAck(1, 0), two}, chunk: 100}
	c, err := Bind(p, EventLog)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Call(4, []byte{0})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, stub) {
		t.Errorf("stub of %d bytes, want %d", len(got), len(stub))
	}
}

func TestCallFault(t *testing.T) {
	body := make([]byte, 16)
	binary.LittleEndian.PutUint32(body[8:], 5)
	fault := append(header(ptypeFault, 3, headerSize+16, 2), body...)
	c, err := Bind(&pipeFake{answers: [][]byte{bindAck(1, 0), fault}, chunk: 4096}, EventLog)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(7, nil)
	var f *Fault
	if !errors.As(err, &f) || f.Status != 5 {
		t.Fatalf("fault: %v", err)
	}
}

func u16z(s string) []byte {
	var b []byte
	for _, c := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return append(b, 0, 0)
}

// record builds an EVENTLOGRECORD as a server lays it out.
func record(num uint32, at time.Time, id uint32, typ uint16, source string, strs ...string) []byte {
	var tail []byte
	tail = append(tail, u16z(source)...)
	tail = append(tail, u16z("EVTSRV")...)
	for len(tail)%4 != 0 {
		tail = append(tail, 0)
	}
	stringOff := 56 + len(tail)
	for _, s := range strs {
		tail = append(tail, u16z(s)...)
	}
	for len(tail)%4 != 0 {
		tail = append(tail, 0)
	}
	n := 56 + len(tail) + 4
	le := binary.LittleEndian
	b := make([]byte, 56)
	le.PutUint32(b[0:], uint32(n))
	le.PutUint32(b[4:], recordMagic)
	le.PutUint32(b[8:], num)
	le.PutUint32(b[12:], uint32(at.Unix()))
	le.PutUint32(b[16:], uint32(at.Unix()))
	le.PutUint32(b[20:], id)
	le.PutUint16(b[24:], typ)
	le.PutUint16(b[26:], uint16(len(strs)))
	le.PutUint32(b[36:], uint32(stringOff))
	b = append(b, tail...)
	return le.AppendUint32(b, uint32(n))
}

func TestParseRecords(t *testing.T) {
	at := time.Unix(1764990000, 0).UTC()
	b := append(record(41, at, 4625, TypeAuditFailure, "Microsoft-Windows-Security-Auditing", "S-1-0-0", "scanuser", "0xc000006d"),
		record(40, at.Add(-time.Hour), 0x80000000|2019, TypeError, "Srv")...)
	rs, err := ParseRecords(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].Number != 41 || rs[0].ID() != 4625 || !rs[0].Generated.Equal(at) || rs[0].Computer != "EVTSRV" ||
		len(rs[0].Strings) != 3 || rs[0].Strings[1] != "scanuser" || rs[1].ID() != 2019 || rs[1].Source != "Srv" || len(rs[1].Strings) != 0 {
		t.Fatalf("records %+v", rs)
	}
	for _, cut := range []int{1, 55, 60, len(b) - 1} {
		if _, err := ParseRecords(b[:cut]); err == nil {
			t.Errorf("cut at %d accepted", cut)
		}
	}
}

func TestParseReadEventLog(t *testing.T) {
	data := record(1, time.Unix(1, 0), 6005, TypeInformation, "EventLog")
	stub := binary.LittleEndian.AppendUint32(nil, 128)
	stub = append(stub, data...)
	stub = append(stub, make([]byte, 128-len(data))...)
	stub = binary.LittleEndian.AppendUint32(stub, uint32(len(data)))
	stub = binary.LittleEndian.AppendUint32(stub, 0)
	stub = binary.LittleEndian.AppendUint32(stub, 0)
	r, err := ParseReadEventLog(stub)
	if err != nil || !bytes.Equal(r.Data, data) {
		t.Fatalf("read %+v, %v", r, err)
	}
	binary.LittleEndian.PutUint32(stub[len(stub)-4:], statusBufferTooSmal)
	binary.LittleEndian.PutUint32(stub[len(stub)-8:], 9000)
	if r, err := ParseReadEventLog(stub); err != nil || r.Need != 9000 {
		t.Errorf("too small: %+v, %v", r, err)
	}
	binary.LittleEndian.PutUint32(stub[len(stub)-4:], statusEndOfFile)
	if r, err := ParseReadEventLog(stub); err != nil || !r.EOF {
		t.Errorf("end: %+v, %v", r, err)
	}
	binary.LittleEndian.PutUint32(stub[len(stub)-4:], 0xC0000022)
	var se *StatusError
	if _, err := ParseReadEventLog(stub); !errors.As(err, &se) {
		t.Errorf("denied: %v", err)
	}
}

func TestShareGetInfo(t *testing.T) {
	req := ShareGetInfoRequest(`\\evtsrv`, "limited")
	if len(req)%4 != 0 || binary.LittleEndian.Uint32(req[len(req)-4:]) != 2 {
		t.Errorf("request % x", req)
	}
	stub := []byte{}
	for _, v := range []uint32{2, 0x20000, 0x20004, 0, 0x20008, 0, 2, 1, 0x2000c, 0} {
		stub = binary.LittleEndian.AppendUint32(stub, v)
	}
	stub = append(stub, make([]byte, 40)...) // deferred strings, not read
	stub = binary.LittleEndian.AppendUint32(stub, 0)
	u, err := ParseShareGetInfo(stub)
	if err != nil || u.Current != 1 || u.Max != 2 {
		t.Fatalf("uses %+v, %v", u, err)
	}
	binary.LittleEndian.PutUint32(stub[len(stub)-4:], 5)
	var we *WinError
	if _, err := ParseShareGetInfo(stub); !errors.As(err, &we) || we.Error() != "share info: access denied" {
		t.Errorf("denied: %v", err)
	}
}

func TestOpenEventLogRequest(t *testing.T) {
	b := OpenEventLogRequest("Security")
	// NULL server, Length 16, MaximumLength 16, a referent, then max 8, offset 0, actual 8 and 16 bytes of
	// characters, the empty RegModuleName (0, 0, NULL), major and minor 1.
	if len(b) != 4+8+12+16+8+8 {
		t.Fatalf("%d bytes: % x", len(b), b)
	}
	if binary.LittleEndian.Uint16(b[4:]) != 16 || binary.LittleEndian.Uint32(b[12:]) != 8 || binary.LittleEndian.Uint32(b[20:]) != 8 {
		t.Errorf("% x", b)
	}
}

func TestSessionEnum(t *testing.T) {
	req := SessionEnumRequest(`\\evtsrv`)
	if len(req)%4 != 0 || binary.LittleEndian.Uint32(req[len(req)-8:]) != 0xFFFFFFFF {
		t.Errorf("request % x", req)
	}
	le := binary.LittleEndian
	var b []byte
	for _, v := range []uint32{0, 0, 0x20000, 2, 0x20004, 2, 0x20008, 0x2000c} {
		b = le.AppendUint32(b, v)
	}
	for _, name := range []string{`\\10.77.0.2`, `\\10.77.0.9x`} {
		u := utf16.Encode([]rune(name + "\x00"))
		b = le.AppendUint32(b, uint32(len(u)))
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, uint32(len(u)))
		for _, c := range u {
			b = le.AppendUint16(b, c)
		}
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
	}
	b = le.AppendUint32(b, 2) // TotalEntries
	b = le.AppendUint32(b, 0) // ResumeHandle: NULL
	b = le.AppendUint32(b, 0)
	n, err := ParseSessionEnum(b)
	if err != nil || n != 2 {
		t.Fatalf("sessions %d, %v", n, err)
	}
	for _, cut := range []int{4, 12, 40, len(b) - 8} {
		if _, err := ParseSessionEnum(append(append([]byte(nil), b[:cut]...), 0, 0, 0, 0)); err == nil {
			t.Errorf("cut at %d accepted", cut)
		}
	}
	le.PutUint32(b[len(b)-4:], 5)
	if _, err := ParseSessionEnum(b); err == nil || !strings.Contains(err.Error(), "access denied") {
		t.Errorf("denied: %v", err)
	}
}
