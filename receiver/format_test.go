package receiver

import (
	"bytes"
	"encoding/binary"
	"errors"
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
		want format
	}{
		{"pdf", pdf, formatComplete},
		{"pdf-cut", pdf[:len(pdf)-8], formatIncomplete},
		{"pdf-eof-then-garbage", append(append([]byte{}, pdf...), bytes.Repeat([]byte{' '}, 100)...), formatComplete},
		{"pdf-eof-far-from-end", append(append([]byte{}, pdf...), bytes.Repeat([]byte{'x'}, 2000)...), formatIncomplete},
		{"jpeg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9}, formatComplete},
		{"jpeg-padded", []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9, 0, 0}, formatComplete},
		{"jpeg-cut", []byte{0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3}, formatIncomplete},
		{"tiff", tiffFile(100, 0), formatComplete},
		{"tiff-cut", tiffFile(100, 10), formatIncomplete},
		{"tiff-header-only", []byte("II*\x00\x08\x00\x00\x00"), formatIncomplete},
		{"tiff-loop", loopTIFF, formatIncomplete},
		{"text", []byte("hello"), formatUnknown},
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
			if got == formatIncomplete && why == "" {
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
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
	got := safeName(long)
	if len(got) > maxName || !strings.HasSuffix(got, ".pdf") || !utf8.ValidString(got) {
		t.Errorf("long name: %d bytes %q", len(got), got)
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
