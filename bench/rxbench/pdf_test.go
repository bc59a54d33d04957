package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/scanwarden/scanwarden/receiver"
)

// TestWritePDF: the bench's scan is a PDF of exactly the size asked that
// the receiver takes as a complete scan, and its xref table and startxref
// point at the objects and the table they name.
func TestWritePDF(t *testing.T) {
	for _, size := range []int64{1 << 10, 9999, 100000, 1 << 20, 3<<20 + 7} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var b bytes.Buffer
			if err := writePDF(&b, size); err != nil {
				t.Fatal(err)
			}
			p := b.Bytes()
			if int64(len(p)) != size {
				t.Fatalf("%d bytes, want %d", len(p), size)
			}
			if k, ok, why := receiver.Sniff(bytes.NewReader(p), size, "scan.pdf"); k != receiver.KindPDF || !ok {
				t.Fatalf("sniffed %q %v: %s", k, ok, why)
			}
			if !bytes.HasSuffix(p, []byte("%%EOF\n")) {
				t.Fatalf("ends %q", p[len(p)-20:])
			}
			m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(p)
			if m == nil {
				t.Fatal("no startxref")
			}
			x, _ := strconv.Atoi(string(m[1]))
			if !bytes.HasPrefix(p[x:], []byte("xref\n0 6\n")) {
				t.Fatalf("startxref %d points at %q", x, p[x:min(x+20, len(p))])
			}
			for i, e := range regexp.MustCompile(`(\d{10}) 00000 n `).FindAllSubmatch(p[x:], -1) {
				o, _ := strconv.Atoi(string(e[1]))
				if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(p[o:], []byte(want)) {
					t.Errorf("object %d at %d: %q", i+1, o, p[o:o+10])
				}
			}
		})
	}
	if err := writePDF(&bytes.Buffer{}, 100); err == nil {
		t.Error("a 100-byte PDF was written")
	}
}
