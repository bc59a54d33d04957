package smbcheck

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
)

// canarySize is what the write step writes: enough to meet a full disk
// (the free space is reported too, and warned about below 100 MiB).
const canarySize = 8 << 10

// testFile is the write step's payload for a device that scans to ft: a
// tiny valid file of that type — a file screen or a virus scanner judges it
// as it judges the MFP's scans — exactly canarySize bytes, padded where
// the format allows (a PDF comment, bytes no TIFF tag points at, a JPEG
// comment segment, a ZIP comment). Without a type it is canaryPayload.
func testFile(ft FileType, name string) []byte {
	pad := func(n int) []byte { return canaryPayload(name)[:max(n, 0)] }
	switch ft {
	case FileTypePDF:
		return pdfTestFile(pad)
	case FileTypeTIFF:
		return tiffTestFile(pad)
	case FileTypeJPEG:
		return jpegTestFile(pad)
	case FileTypeXPS, FileTypeOXPS:
		return xpsTestFile(ft == FileTypeOXPS, pad)
	}
	return canaryPayload(name)
}

// canaryPayload is exactly canarySize bytes: a line naming the file,
// repeated, the last copy cut short.
func canaryPayload(name string) []byte {
	line := []byte("scanwarden write check " + name + " - this file is removed at once; if you see it, the account cannot delete.\r\n")
	b := make([]byte, 0, canarySize)
	for len(b) < canarySize {
		b = append(b, line[:min(len(line), canarySize-len(b))]...)
	}
	return b
}

// pdfTestFile is a one-page empty PDF whose padding is comment lines after
// the header (the cross-reference offsets count them).
func pdfTestFile(pad func(int) []byte) []byte {
	build := func(padding []byte) []byte {
		var b bytes.Buffer
		b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
		if len(padding) > 0 {
			// One comment line: the padding with its line breaks as spaces.
			b.WriteString("% ")
			b.Write(bytes.Map(func(r rune) rune {
				if r == '\r' || r == '\n' {
					return ' '
				}
				return r
			}, padding))
			b.WriteString("\n")
		}
		objs := []string{
			"<</Type/Catalog/Pages 2 0 R>>",
			"<</Type/Pages/Kids[3 0 R]/Count 1>>",
			"<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>",
		}
		offs := make([]int, len(objs))
		for i, o := range objs {
			offs[i] = b.Len()
			fmt.Fprintf(&b, "%d 0 obj%sendobj\n", i+1, o)
		}
		xref := b.Len()
		fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
		for _, o := range offs {
			fmt.Fprintf(&b, "%010d 00000 n \n", o)
		}
		fmt.Fprintf(&b, "trailer<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
		return b.Bytes()
	}
	// The padding moves the offsets, whose digits may add one byte: two
	// rounds settle it.
	n := canarySize - len(build(nil)) - 3
	n -= len(build(pad(n))) - canarySize
	return build(pad(n))
}

// tiffTestFile is a 1×1 bilevel uncompressed TIFF; the padding follows the
// image data, pointed at by no tag.
func tiffTestFile(pad func(int) []byte) []byte {
	le := binary.LittleEndian
	type entry struct {
		tag, typ uint16
		count    uint32
		value    uint32
	}
	const short, long, rational = 3, 4, 5
	const ifdAt = 8
	entries := []entry{
		{256, short, 1, 1},    // ImageWidth
		{257, short, 1, 1},    // ImageLength
		{258, short, 1, 1},    // BitsPerSample
		{259, short, 1, 1},    // Compression: none
		{262, short, 1, 0},    // PhotometricInterpretation: WhiteIsZero
		{273, long, 1, 0},     // StripOffsets (below)
		{278, short, 1, 1},    // RowsPerStrip
		{279, long, 1, 1},     // StripByteCounts
		{282, rational, 1, 0}, // XResolution (below)
		{283, rational, 1, 0}, // YResolution (below)
		{296, short, 1, 2},    // ResolutionUnit: inch
	}
	ifdLen := 2 + 12*len(entries) + 4
	res := uint32(ifdAt + ifdLen)
	strip := res + 8
	entries[5].value, entries[8].value, entries[9].value = strip, res, res
	b := make([]byte, 0, canarySize)
	b = append(b, 'I', 'I', 42, 0)
	b = le.AppendUint32(b, ifdAt)
	b = le.AppendUint16(b, uint16(len(entries)))
	for _, e := range entries {
		b = le.AppendUint16(b, e.tag)
		b = le.AppendUint16(b, e.typ)
		b = le.AppendUint32(b, e.count)
		b = le.AppendUint32(b, e.value)
	}
	b = le.AppendUint32(b, 0) // no next IFD
	b = le.AppendUint32(b, 72)
	b = le.AppendUint32(b, 1) // 72/1 dpi, for both resolutions
	b = append(b, 0)          // the one white pixel
	return append(b, pad(canarySize-len(b))...)
}

// jpegTestFile is a 1×1 grey JPEG with the padding in a comment segment
// right after its start marker.
func jpegTestFile(pad func(int) []byte) []byte {
	img := image.NewGray(image.Rect(0, 0, 1, 1))
	img.SetGray(0, 0, color.Gray{Y: 255})
	var enc bytes.Buffer
	jpeg.Encode(&enc, img, nil) // into memory: it cannot fail
	j := enc.Bytes()
	n := canarySize - len(j) - 4
	if n < 0 || n > 0xffff-2 {
		return j
	}
	out := make([]byte, 0, canarySize)
	out = append(out, j[:2]...) // SOI
	out = append(out, 0xff, 0xfe)
	out = binary.BigEndian.AppendUint16(out, uint16(n+2))
	out = append(out, pad(n)...)
	return append(out, j[2:]...)
}

// xpsTestFile is a one-page empty XPS document (OpenXPS when oxps), its
// padding the ZIP archive's comment.
func xpsTestFile(oxps bool, pad func(int) []byte) []byte {
	ns, rel, ct := "http://schemas.microsoft.com/xps/2005/06", "http://schemas.microsoft.com/xps/2005/06/fixedrepresentation", "application/vnd.ms-package.xps-"
	if oxps {
		ns, rel, ct = "http://schemas.openxps.org/oxps/v1.0", "http://schemas.openxps.org/oxps/v1.0/fixedrepresentation", "application/vnd.openxps-"
	}
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="fdseq" ContentType="` + ct + `fixeddocumentsequence+xml"/>` +
			`<Default Extension="fdoc" ContentType="` + ct + `fixeddocument+xml"/>` +
			`<Default Extension="fpage" ContentType="` + ct + `fixedpage+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="R0" Type="` + rel + `" Target="/FixedDocSeq.fdseq"/></Relationships>`},
		{"FixedDocSeq.fdseq", `<FixedDocumentSequence xmlns="` + ns + `"><DocumentReference Source="/Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>`},
		{"Documents/1/FixedDoc.fdoc", `<FixedDocument xmlns="` + ns + `"><PageContent Source="/Documents/1/Pages/1.fpage"/></FixedDocument>`},
		{"Documents/1/Pages/1.fpage", `<FixedPage xmlns="` + ns + `" Width="96" Height="96" xml:lang="und"></FixedPage>`},
	}
	build := func(comment []byte) []byte {
		var b bytes.Buffer
		w := zip.NewWriter(&b)
		for _, p := range parts {
			// Into memory: neither can fail.
			f, _ := w.CreateHeader(&zip.FileHeader{Name: p.name, Method: zip.Store})
			f.Write([]byte(p.body))
		}
		w.SetComment(strings.ToValidUTF8(string(comment), ""))
		w.Close()
		return b.Bytes()
	}
	return build(pad(canarySize - len(build(nil))))
}
