package localname

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// nbnsAnswer builds a positive NAME QUERY RESPONSE as a responder would
// (RFC 1002 §4.2.13): R, AA, RD, and B when it answers a broadcast.
func nbnsAnswer(t testing.TB, id uint16, name string, suffix byte, rcode int, addrs ...netip.Addr) []byte {
	t.Helper()
	enc, err := encodeNetBIOSName(name, suffix)
	if err != nil {
		t.Fatal(err)
	}
	b := binary.BigEndian.AppendUint16(nil, id)
	b = binary.BigEndian.AppendUint16(b, uint16(nbnsResponse|nbnsAA|nbnsRD|rcode))
	b = append(b, 0, 0, 0, 1, 0, 0, 0, 0) // QD 0, AN 1
	b = appendName(b, enc)
	b = binary.BigEndian.AppendUint16(b, nbnsTypeNB)
	b = binary.BigEndian.AppendUint16(b, nbnsClassIN)
	b = binary.BigEndian.AppendUint32(b, 300000)
	b = binary.BigEndian.AppendUint16(b, uint16(6*len(addrs)))
	for _, a := range addrs {
		b = append(b, 0, 0)
		b = append(b, a.AsSlice()...)
	}
	return b
}

// llmnrAnswer builds an LLMNR response to an A query for name, its answers
// naming the question by a compression pointer (0xC00C), as DNS servers do.
func llmnrAnswer(id uint16, flags uint16, name string, addrs ...netip.Addr) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = binary.BigEndian.AppendUint16(b, llmnrQR|flags)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(len(addrs)))
	b = append(b, 0, 0, 0, 0)
	b = appendName(b, name)
	b = append(b, 0, typeA, 0, classIN)
	for _, a := range addrs {
		typ := uint16(typeA)
		if a.Is6() {
			typ = typeAAAA
		}
		b = append(b, 0xC0, 0x0C)
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, classIN)
		b = binary.BigEndian.AppendUint32(b, 30)
		b = binary.BigEndian.AppendUint16(b, uint16(a.BitLen()/8))
		b = append(b, a.AsSlice()...)
	}
	return b
}

func TestNetBIOSNameEncoding(t *testing.T) {
	// RFC 1001 §14.1's example: "FRED" padded with spaces (the 16th byte
	// 0x20, the file server suffix, encodes as "CA" too).
	got, err := encodeNetBIOSName("fred", ServerSuffix)
	if err != nil || got != "EGFCEFEECACACACACACACACACACACACA" {
		t.Fatalf("encode FRED: %q, %v", got, err)
	}
	name, suffix, err := decodeNetBIOSName(got)
	if err != nil || name != "FRED" || suffix != 0x20 {
		t.Fatalf("decode: %q %x %v", name, suffix, err)
	}
	for _, bad := range []string{"", "fs1.corp.local", "sixteen-chars-xx", "a b", `a\b`} {
		if _, err := encodeNetBIOSName(bad, ServerSuffix); err == nil {
			t.Errorf("encode %q: no error", bad)
		}
	}
}

func TestNBNSQuery(t *testing.T) {
	q, err := nbnsQuery(0x1234, "work", ServerSuffix, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 12+34+4 || binary.BigEndian.Uint16(q) != 0x1234 || binary.BigEndian.Uint16(q[2:]) != 0x0110 ||
		binary.BigEndian.Uint16(q[4:]) != 1 || q[12] != 32 || q[45] != 0 || binary.BigEndian.Uint16(q[46:]) != 0x20 || binary.BigEndian.Uint16(q[48:]) != 1 {
		t.Fatalf("broadcast query % x", q)
	}
	q, _ = nbnsQuery(1, "work", ServerSuffix, false)
	if binary.BigEndian.Uint16(q[2:]) != 0x0100 {
		t.Fatalf("WINS query flags %04x, want RD only", binary.BigEndian.Uint16(q[2:]))
	}
}

func TestLLMNRQuery(t *testing.T) {
	q, err := llmnrQuery(0xBEEF, "work", typeA)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xBE, 0xEF, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 'w', 'o', 'r', 'k', 0, 0, 1, 0, 1}
	if string(q) != string(want) {
		t.Fatalf("query % x, want % x", q, want)
	}
	if _, err := llmnrQuery(1, "fs1.corp.local", typeA); err == nil {
		t.Fatal("a dotted name was encoded")
	}
}

func TestParseNBNSResponse(t *testing.T) {
	a, b := netip.MustParseAddr("10.77.0.60"), netip.MustParseAddr("192.168.1.9")
	r, err := ParseNBNSResponse(nbnsAnswer(t, 7, "nbpc", ServerSuffix, 0, a, b))
	if err != nil || r.ID != 7 || r.Name != "NBPC" || r.Suffix != 0x20 || len(r.Entries) != 2 || r.Entries[0].Addr != a || r.Entries[1].Addr != b {
		t.Fatalf("%+v %v", r, err)
	}
	neg := nbnsAnswer(t, 7, "nbpc", ServerSuffix, 3)
	if _, err := ParseNBNSResponse(neg); !errors.Is(err, ErrNegative) || !strings.Contains(err.Error(), "NAM_ERR") {
		t.Fatalf("negative: %v", err)
	}
	good := nbnsAnswer(t, 7, "nbpc", ServerSuffix, 0, a)
	bad := map[string]struct {
		b    []byte
		want string
	}{
		"short":           {good[:5], "shorter than the 12-byte header"},
		"request":         {func() []byte { c := clone(good); c[2] &^= 0x80; return c }(), "R bit is clear"},
		"opcode":          {func() []byte { c := clone(good); c[2] |= 0x28; return c }(), "opcode 5"},
		"no answer":       {func() []byte { c := clone(good[:12]); c[7] = 0; return c }(), "no answer record"},
		"name cut":        {good[:20], "runs past the end"},
		"not letters":     {func() []byte { c := clone(good); c[14] = 'z'; return c }(), "not a letter A-P"},
		"label length":    {func() []byte { c := clone(good); c[12] = 31; c[44] = 0; return c }(), "label of 31 bytes, want 32"},
		"rr cut":          {good[:50], "cut short after its name"},
		"type":            {func() []byte { c := clone(good); c[47] = 0x21; return c }(), "answer type 0x0021"},
		"rdlength odd":    {func() []byte { c := clone(good); c[55] = 5; return c }(), "not a positive multiple of 6"},
		"rdlength past":   {func() []byte { c := clone(good); c[55] = 12; return c }(), "RDLENGTH 12 runs past the end"},
		"pointer forward": {func() []byte { c := clone(good); c[12], c[13] = 0xC0, 0x40; return c }(), "points forward"},
		"label type":      {func() []byte { c := clone(good); c[12] = 0x80; return c }(), "label type 0x80"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := ParseNBNSResponse(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "nbns response: ") {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestParseLLMNRResponse(t *testing.T) {
	a, a6 := netip.MustParseAddr("10.77.0.60"), netip.MustParseAddr("fe80::1")
	r, err := ParseLLMNRResponse(llmnrAnswer(9, llmnrT, "LLPC", a, a6))
	if err != nil || r.ID != 9 || r.Name != "LLPC" || !r.Tentative || len(r.Addrs) != 2 || r.Addrs[0] != a || r.Addrs[1] != a6 {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := ParseLLMNRResponse(llmnrAnswer(9, 3, "llpc")); !errors.Is(err, ErrNegative) {
		t.Fatalf("rcode 3: %v", err)
	}
	good := llmnrAnswer(9, 0, "llpc", a)
	// question: 12..17 name, 18..21 type/class; answer: 22..23 pointer, 24 type, 26 class, 28 ttl, 32 rdlength, 34 data
	bad := map[string]struct {
		b    []byte
		want string
	}{
		"short":        {good[:11], "shorter than the 12-byte header"},
		"query":        {func() []byte { c := clone(good); c[2] &^= 0x80; return c }(), "QR bit is clear"},
		"opcode":       {func() []byte { c := clone(good); c[2] |= 0x08; return c }(), "opcode 1"},
		"qdcount":      {func() []byte { c := clone(good); c[5] = 2; return c }(), "QDCOUNT 2"},
		"question cut": {good[:19], "question cut short"},
		"answer cut":   {good[:30], "answer 1 cut short"},
		"rdata past":   {func() []byte { c := clone(good); c[33] = 40; return c }(), "RDLENGTH 40 runs past"},
		"A size":       {append(func() []byte { c := clone(good); c[33] = 5; return c }(), 0), "A record with 5 bytes"},
		"pointer loop": {func() []byte { c := clone(good); c[22], c[23] = 0xC0, 0x16; return c }(), "points forward"},
		"self pointer": {func() []byte { c := clone(good); c[12], c[13] = 0xC0, 0x0C; return c }(), "points forward"},
		"long question": {append(append(clone(good[:12]), func() []byte {
			var n []byte
			for range 5 {
				n = append(n, 63)
				n = append(n, make([]byte, 63)...)
			}
			return n
		}()...), 0, 0, 1, 0, 1), "longer than 255"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := ParseLLMNRResponse(tc.b)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "llmnr response: ") {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
	// a record of another name or class is skipped, not taken
	other := llmnrAnswer(9, 0, "llpc", a)
	other[27] = 3 // class CH
	if r, err := ParseLLMNRResponse(other); err != nil || len(r.Addrs) != 0 {
		t.Fatalf("class CH record taken: %+v %v", r, err)
	}
}

func TestSingleLabel(t *testing.T) {
	for name, ok := range map[string]bool{"work": true, "WORK-PC": true, "work.": true, "fs1.corp.local": false, "": false, "a b": false, "pc|1": false, "bücher": false, strings.Repeat("x", 64): false} {
		if got := SingleLabel(name) == ""; got != ok {
			t.Errorf("SingleLabel(%q) = %q", name, SingleLabel(name))
		}
	}
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }
