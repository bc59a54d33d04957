package smbcheck

import (
	"archive/zip"
	"bytes"
	"image/jpeg"
	"regexp"
	"strconv"
	"testing"

	"github.com/scanwarden/scanwarden/smbconn"
)

// Each file type's test file is canarySize bytes and valid: the JPEG and
// the XPS package decode with Go's own readers, the PDF's cross-reference
// offsets point at its objects, the TIFF's strip at its pixel.
func TestTestFileTypes(t *testing.T) {
	name := "scanwarden-check-20261206T060000Z-0123456789ab"
	for _, ft := range append(smbconn.FileTypes(), "") {
		b := testFile(ft, name+ft.Ext())
		if len(b) != canarySize {
			t.Errorf("%q: %d bytes, want %d", ft, len(b), canarySize)
		}
		switch ft {
		case FileTypePDF:
			if !bytes.HasPrefix(b, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(b, []byte("%%EOF\n")) {
				t.Errorf("pdf frame: %q … %q", b[:12], b[len(b)-8:])
			}
			m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(b)
			at, _ := strconv.Atoi(string(m[1]))
			if !bytes.HasPrefix(b[at:], []byte("xref\n0 4\n")) {
				t.Errorf("startxref %d does not point at the xref", at)
			}
			for i, o := range regexp.MustCompile(`(\d{10}) 00000 n`).FindAllSubmatch(b, -1) {
				off, _ := strconv.Atoi(string(o[1]))
				if !bytes.HasPrefix(b[off:], []byte(strconv.Itoa(i+1)+" 0 obj")) {
					t.Errorf("xref entry %d: %d points at %q", i+1, off, b[off:off+8])
				}
			}
		case FileTypeTIFF:
			if string(b[:4]) != "II*\x00" || b[8] != 11 {
				t.Errorf("tiff header %q", b[:10])
			}
		case FileTypeJPEG:
			img, err := jpeg.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() != 1 {
				t.Errorf("jpeg: %v", err)
			}
		case FileTypeXPS, FileTypeOXPS:
			z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil || len(z.File) != 5 || z.File[0].Name != "[Content_Types].xml" {
				t.Fatalf("xps zip: %v", err)
			}
			ns := "openxps"
			if ft == FileTypeXPS {
				ns = "schemas.microsoft.com/xps"
			}
			f, _ := z.File[2].Open()
			var body bytes.Buffer
			body.ReadFrom(f)
			if !bytes.Contains(body.Bytes(), []byte(ns)) {
				t.Errorf("%s: sequence %q", ft, body.String())
			}
		case "":
			if !bytes.Equal(b, canaryPayload(name+".tmp")) {
				t.Error("no file type: not the text payload")
			}
		}
	}
}
