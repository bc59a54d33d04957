package main

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
)

// writePDF writes a valid one-page PDF of exactly size bytes, as a scanner
// makes one: a page showing one greyscale image XObject whose samples
// (random, so that nothing compresses them) fill the file — a real header,
// objects, an xref table with their offsets, a trailer and %%EOF, which
// the receiver's scan-format filter and completeness check accept. size
// must leave room for the structure (at least 1 KiB).
func writePDF(w io.Writer, size int64) error {
	// The image's sample count is what is left once the structure is
	// written, and the structure's length depends on how many digits that
	// count has: settle it by trying.
	samples := size
	for range 4 {
		over := int64(len(pdfParts(samples, nil)))
		samples = size - over
	}
	if samples < 1 {
		return fmt.Errorf("a PDF of %d bytes has no room for its image", size)
	}
	offsets := make([]int64, 0, 5)
	head := pdfParts(samples, &offsets)
	if int64(len(head))+samples != size {
		return fmt.Errorf("PDF layout: %d + %d bytes, want %d", len(head), samples, size)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	// the structure before the samples, the samples, the structure after
	cut := offsets[len(offsets)-1]
	if _, err := io.WriteString(bw, head[:cut]); err != nil {
		return err
	}
	if _, err := io.CopyN(bw, rand.Reader, samples); err != nil {
		return err
	}
	if _, err := io.WriteString(bw, head[cut:]); err != nil {
		return err
	}
	return bw.Flush()
}

// pdfParts is the PDF's structure around samples bytes of image data, as
// one string with the samples left out; offsets, when not nil, gets each
// object's offset and, last, where the samples go.
func pdfParts(samples int64, offsets *[]int64) string {
	var s string
	var offs []int64
	obj := func(body string) {
		offs = append(offs, int64(len(s))) // every object comes before the samples
		s += body
	}
	s = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
	obj("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	obj("2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n")
	obj("3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>\nendobj\n")
	content := "q 595 0 0 842 0 0 cm /Im0 Do Q\n"
	obj(fmt.Sprintf("4 0 obj\n<< /Length %d >>\nstream\n%sendstream\nendobj\n", len(content), content))
	obj(fmt.Sprintf("5 0 obj\n<< /Type /XObject /Subtype /Image /Width %d /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length %d >>\nstream\n", samples, samples))
	at := int64(len(s)) // the samples go here
	s += "\nendstream\nendobj\n"
	xref := int64(len(s)) + samples
	s += fmt.Sprintf("xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		s += fmt.Sprintf("%010d 00000 n \n", o)
	}
	s += fmt.Sprintf("trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, xref)
	if offsets != nil {
		*offsets = append(offs, at)
	}
	return s
}
