package receiver

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func tiffFile(stripLen int, cut int) []byte {
	var b bytes.Buffer
	b.WriteString("II*\x00")
	binary.Write(&b, binary.LittleEndian, uint32(8))
	ents := [][3]uint32{{256, 4, 10}, {257, 4, 10}, {273, 4, 8 + 2 + 3*12 + 4}, {279, 4, uint32(stripLen)}}
	ents = ents[:4]
	binary.Write(&b, binary.LittleEndian, uint16(len(ents)))
	for _, e := range ents {
		binary.Write(&b, binary.LittleEndian, uint16(e[0]))
		binary.Write(&b, binary.LittleEndian, uint16(e[1]))
		binary.Write(&b, binary.LittleEndian, uint32(1))
		binary.Write(&b, binary.LittleEndian, e[2])
	}
	binary.Write(&b, binary.LittleEndian, uint32(0))
	// fix the strip offset: header 8 + 2 + 4*12 + 4
	out := b.Bytes()
	binary.LittleEndian.PutUint32(out[8+2+2*12+8:], uint32(len(out)))
	out = append(out, bytes.Repeat([]byte{0x55}, stripLen)...)
	return out[:len(out)-cut]
}

func TestCheckFormat(t *testing.T) {
	pdf := []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
	loopTIFF := []byte("II*\x00\x08\x00\x00\x00\x00\x00\x08\x00\x00\x00")
	for _, tc := range []struct {
		name string
		data []byte
		want Format
	}{
		{"pdf", pdf, FormatComplete},
		{"pdf-cut", pdf[:len(pdf)-8], FormatIncomplete},
		{"pdf-eof-then-garbage", append(append([]byte{}, pdf...), bytes.Repeat([]byte{' '}, 100)...), FormatComplete},
		{"pdf-eof-far-from-end", append(append([]byte{}, pdf...), bytes.Repeat([]byte{'x'}, 2000)...), FormatIncomplete},
		{"jpeg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9}, FormatComplete},
		{"jpeg-padded", []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9, 0, 0}, FormatComplete},
		{"jpeg-cut", []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3}, FormatIncomplete},
		{"tiff", tiffFile(100, 0), FormatComplete},
		{"tiff-cut", tiffFile(100, 10), FormatIncomplete},
		{"tiff-header-only", []byte("II*\x00\x08\x00\x00\x00"), FormatIncomplete},
		{"tiff-loop", loopTIFF, FormatIncomplete},
		{"text", []byte("hello"), FormatUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f")
			os.WriteFile(p, tc.data, 0o600)
			f, _ := os.Open(p)
			defer f.Close()
			got, why, err := checkFormat(f, int64(len(tc.data)))
			if err != nil || got != tc.want {
				t.Fatalf("got %v (%s, %v), want %v", got, why, err, tc.want)
			}
			if got == FormatIncomplete && why == "" {
				t.Fatal("incomplete without a reason")
			}
		})
	}
}

func TestJunk(t *testing.T) {
	for name, junk := range map[string]bool{"._scan.pdf": true, "Thumbs.db": true, "~$doc.docx": true, "x.TMP": true,
		"scan.pdf": false, "a/._b": true, "doc_001.tif": false} {
		if got := junkReason(name) != ""; got != junk {
			t.Errorf("%s: junk=%v", name, got)
		}
	}
}

func TestPipe(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789"), 350000)
	var dst, tee bytes.Buffer
	bufs := [][]byte{make([]byte, 1000), make([]byte, 1000)}
	n, err := pipe(&dst, bytes.NewReader(src), &tee, bufs)
	if err != nil || n != int64(len(src)) || !bytes.Equal(dst.Bytes(), src) || !bytes.Equal(tee.Bytes(), src) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	// a failing writer stops the copy
	n, err = pipe(failWriter{}, bytes.NewReader(src), nil, bufs)
	if err == nil || n != 0 {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrPermission }

func TestSafeName(t *testing.T) {
	long := strings.Repeat("é", 150) + ".pdf"
	for in, want := range map[string]string{
		"scan.pdf":         "scan.pdf",
		"../../etc/passwd": "_.._etc_passwd",
		`a\b:c*?.pdf`:      "a_b_c__.pdf",
		"bell\a\nx.pdf":    "bell__x.pdf",
		"  .hidden. ":      "hidden",
		"":                 "scan",
		"...":              "scan",
		"CON.pdf":          "_CON.pdf",
		"bad\xffutf8.pdf":  "bad_utf8.pdf",
		"a\u202efdp.exe":   "a_fdp.exe",
		"z\u200bw.pdf":     "z_w.pdf",
	} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
	got := SafeName(long)
	if len(got) > maxName || !strings.HasSuffix(got, ".pdf") || !utf8.ValidString(got) {
		t.Errorf("long name: %d bytes %q", len(got), got)
	}
}

func TestSambaMissing(t *testing.T) {
	c := SambaConfig{Dir: "/x", Inbox: "/y", Listen: netip.MustParseAddr("127.0.0.1"), Port: 445, Share: "scans",
		Bin: SambaBin{Smbd: "/nonexistent/smbd"}}
	if _, err := NewSamba(c); !errors.Is(err, ErrSambaMissing) {
		t.Fatalf("got %v", err)
	}
}

func TestPipeAt(t *testing.T) {
	src := bytes.Repeat([]byte("abcdefghij"), 350001)
	p := filepath.Join(t.TempDir(), "dst")
	f, _ := os.Create(p)
	defer f.Close()
	var tee bytes.Buffer
	bufs := make([][]byte, writersInFlight+1)
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
	}
	n, err := pipeAt(f, bytes.NewReader(src), &tee, bufs)
	got, _ := os.ReadFile(p)
	if err != nil || n != int64(len(src)) || !bytes.Equal(got, src) || !bytes.Equal(tee.Bytes(), src) {
		t.Fatalf("n=%d err=%v", n, err)
	}
	ro, _ := os.Open(p) // WriteAt fails on a read-only file
	defer ro.Close()
	if _, err := pipeAt(ro, bytes.NewReader(src), nil, bufs); err == nil {
		t.Fatal("no error from a failing WriterAt")
	}
}

func TestHashAt(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789abcdef"), 100003)
	bufs := make([][]byte, writersInFlight+1)
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
	}
	want := sha256.Sum256(src)
	for _, tc := range []struct {
		name string
		size int64
		n    int64
		ok   bool
	}{{"exact", int64(len(src)), int64(len(src)), true}, {"longer", int64(len(src)) - 10, int64(len(src)) - 9, false},
		{"shorter", int64(len(src)) + 10, int64(len(src)), true}} {
		h := sha256.New()
		n, err := hashAt(h, bytes.NewReader(src), tc.size, bufs)
		if err != nil || n != tc.n || (bytes.Equal(h.Sum(nil), want[:]) != tc.ok) {
			t.Errorf("%s: n=%d err=%v", tc.name, n, err)
		}
	}
}

func TestDeliveryErrorNamesOpOnce(t *testing.T) {
	e := &DeliveryError{Scan: 3, Op: "create x.tmp", Err: errors.New("create x.tmp: permission denied")}
	if got := e.Error(); got != "scan 3: create x.tmp: permission denied" {
		t.Fatal(got)
	}
	e = &DeliveryError{Scan: 3, Op: "open held copy", Err: os.ErrNotExist}
	if got := e.Error(); got != "scan 3: open held copy: file does not exist" {
		t.Fatal(got)
	}
}
