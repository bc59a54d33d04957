package receiver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"
)

// Kind is a file format an MFP scans to, told by the file's own bytes.
type Kind string

// The kinds the share delivers. Anything else is refused.
const (
	KindPDF  Kind = "PDF"
	KindTIFF Kind = "TIFF"
	KindJPEG Kind = "JPEG"
	KindPNG  Kind = "PNG"
	KindXPS  Kind = "XPS" // XPS and OpenXPS
	KindDOCX Kind = "DOCX"
	KindXLSX Kind = "XLSX"
	KindPPTX Kind = "PPTX"
	KindText Kind = "plain text" // OCR output
)

// extKinds: the extensions each kind may be delivered under (lower case).
var extKinds = map[string]Kind{
	".pdf": KindPDF, ".tif": KindTIFF, ".tiff": KindTIFF, ".jpg": KindJPEG, ".jpeg": KindJPEG, ".jpe": KindJPEG,
	".png": KindPNG, ".xps": KindXPS, ".oxps": KindXPS, ".docx": KindDOCX, ".xlsx": KindXLSX, ".pptx": KindPPTX,
	".txt": KindText,
}

// Bounds of what the sniffer reads: a few small reads, whatever the size.
const (
	sniffHead   = 4 << 10  // the first bytes, for signatures
	textWindow  = 64 << 10 // text: the first and the last this many bytes are checked
	zipMaxCD    = 1 << 20  // a central directory larger than this is refused
	zipMaxFiles = 10000    // as are more entries
	zipEOCDMax  = 22 + 65535
)

// Sniff says whether the file (size bytes, read through r) is a scan the
// share may deliver under the name name: its bytes are one of the Kinds and
// name's extension is one of that kind's. ok false comes with why, in
// words for the admin. Reads are bounded (a few KiB, the zip's central
// directory up to 1 MiB).
func Sniff(r io.ReaderAt, size int64, name string) (k Kind, ok bool, why string) {
	k, why = sniffKind(r, size)
	if k == "" {
		return "", false, why
	}
	ext := strings.ToLower(path.Ext(name))
	want, known := extKinds[ext]
	switch {
	case ext == "":
		return k, false, fmt.Sprintf("its content is %s but its name has no extension", k)
	case !known:
		return k, false, fmt.Sprintf("its content is %s but its name ends in %q, which is not a scan format", k, ext)
	case want != k:
		return k, false, fmt.Sprintf("its content is %s but its name ends in %q (%s)", k, ext, want)
	}
	return k, true, ""
}

func sniffKind(r io.ReaderAt, size int64) (Kind, string) {
	head := make([]byte, min(size, sniffHead))
	if n, err := r.ReadAt(head, 0); err != nil && err != io.EOF {
		return "", "unreadable: " + err.Error()
	} else {
		head = head[:n]
	}
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return KindPDF, ""
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return KindTIFF, ""
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return KindJPEG, ""
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return KindPNG, ""
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return sniffZip(r, size)
	case bytes.HasPrefix(head, []byte("MZ")):
		return "", "its content is a Windows program (MZ header)"
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "", "its content is a Linux program (ELF header)"
	case bytes.HasPrefix(head, []byte{0x4C, 0x00, 0x00, 0x00, 0x01, 0x14, 0x02, 0x00}):
		return "", "its content is a Windows shortcut (.lnk)"
	case bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}):
		return "", "its content is an OLE compound file (old Office document, .msi), not a scan format"
	}
	if sec := shellSection(head); sec != "" {
		return "", fmt.Sprintf("its content is a Windows shell file (%s): opening its folder makes Explorer reach out to the host it names", sec)
	}
	if isText(r, size) {
		return KindText, ""
	}
	return "", "its content is not a format an MFP scans to (PDF, TIFF, JPEG, PNG, XPS, DOCX/XLSX/PPTX, plain text)"
}

// shellSection names the INI section of a Windows shell file (.url, .scf,
// desktop.ini) in head, or "": such text makes Explorer fetch an icon from
// any host (and send it the user's NTLM hash) when the folder is opened.
func shellSection(head []byte) string {
	low := bytes.ToLower(head)
	for _, sec := range []string{"[internetshortcut]", "[shell]", "[.shellclassinfo]", "[{000214a0-"} {
		if bytes.Contains(low, []byte(sec)) {
			return sec
		}
	}
	return ""
}

// isText: UTF-8 (a BOM allowed) without NUL or control characters other
// than tab, line and form feeds, in the first and last 64 KiB.
func isText(r io.ReaderAt, size int64) bool {
	if size == 0 {
		return false
	}
	first := make([]byte, min(size, textWindow))
	if n, err := r.ReadAt(first, 0); n != len(first) && err != nil {
		return false
	}
	if !textBytes(first, size <= textWindow) {
		return false
	}
	if size > textWindow {
		last := make([]byte, textWindow)
		if n, err := r.ReadAt(last, size-textWindow); n != len(last) && err != nil {
			return false
		}
		// the window may start inside a character: skip up to 3 bytes
		for i := 0; i < 3 && len(last) > 0 && !utf8.RuneStart(last[0]); i++ {
			last = last[1:]
		}
		if !textBytes(last, true) {
			return false
		}
	}
	return true
}

// textBytes checks b; complete says b ends where the file ends (else a
// character cut at the end is allowed).
func textBytes(b []byte, complete bool) bool {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	for len(b) > 0 {
		c, n := utf8.DecodeRune(b)
		if c == utf8.RuneError && n <= 1 {
			if !complete && len(b) < utf8.UTFMax && !utf8.FullRune(b) {
				return true
			}
			return false
		}
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f {
			return false
		}
		b = b[n:]
	}
	return true
}

// sniffZip tells the Office Open XML and XPS packages from other zips by
// the part names in the central directory (read once, bounded): every such
// package has [Content_Types].xml; XPS has a FixedDocumentSequence, a
// document its word/, xl/ or ppt/ main part. A package with macros
// (vbaProject.bin) or an embedded program is refused.
func sniffZip(r io.ReaderAt, size int64) (Kind, string) {
	tail := make([]byte, min(size, zipEOCDMax))
	if _, err := r.ReadAt(tail, size-int64(len(tail))); err != nil && err != io.EOF {
		return "", "unreadable: " + err.Error()
	}
	i := bytes.LastIndex(tail, []byte("PK\x05\x06"))
	if i < 0 || len(tail)-i < 22 {
		return "", "its content is a zip archive without its end record (cut short, or not a document)"
	}
	eocd := tail[i:]
	entries := int(binary.LittleEndian.Uint16(eocd[10:]))
	cdSize := int64(binary.LittleEndian.Uint32(eocd[12:]))
	cdOff := int64(binary.LittleEndian.Uint32(eocd[16:]))
	if entries == 0xFFFF || cdSize == 0xFFFFFFFF || cdOff == 0xFFFFFFFF {
		return "", "its content is a ZIP64 archive, not a scan format"
	}
	if entries > zipMaxFiles || cdSize > zipMaxCD || cdOff < 0 || cdOff+cdSize > size {
		return "", "its content is a zip archive whose directory is out of bounds, not a scan format"
	}
	cd := make([]byte, cdSize)
	if _, err := r.ReadAt(cd, cdOff); err != nil && err != io.EOF {
		return "", "unreadable: " + err.Error()
	}
	var types, fdseq, word, xl, ppt bool
	for n := 0; n < entries; n++ {
		if len(cd) < 46 || !bytes.HasPrefix(cd, []byte("PK\x01\x02")) {
			return "", "its content is a zip archive with a damaged directory, not a scan format"
		}
		nameLen := int(binary.LittleEndian.Uint16(cd[28:]))
		extraLen := int(binary.LittleEndian.Uint16(cd[30:]))
		commentLen := int(binary.LittleEndian.Uint16(cd[32:]))
		if 46+nameLen+extraLen+commentLen > len(cd) {
			return "", "its content is a zip archive with a damaged directory, not a scan format"
		}
		name := strings.ToLower(string(cd[46 : 46+nameLen]))
		cd = cd[46+nameLen+extraLen+commentLen:]
		base := path.Base(name)
		switch {
		case name == "[content_types].xml":
			types = true
		case strings.HasSuffix(name, ".fdseq"):
			fdseq = true
		case name == "word/document.xml":
			word = true
		case name == "xl/workbook.xml":
			xl = true
		case name == "ppt/presentation.xml":
			ppt = true
		case base == "vbaproject.bin" || strings.HasSuffix(base, ".vba"):
			return "", "its content is an Office document with macros, not a scan format"
		case strings.HasSuffix(base, ".exe"), strings.HasSuffix(base, ".dll"), strings.HasSuffix(base, ".lnk"),
			strings.HasSuffix(base, ".js"), strings.HasSuffix(base, ".vbs"), strings.HasSuffix(base, ".ps1"):
			return "", fmt.Sprintf("its content is a package that carries %q, not a scan format", base)
		}
	}
	switch {
	case !types:
		return "", "its content is a zip archive, not a scan format"
	case fdseq && !word && !xl && !ppt:
		return KindXPS, ""
	case word && !fdseq && !xl && !ppt:
		return KindDOCX, ""
	case xl && !fdseq && !word && !ppt:
		return KindXLSX, ""
	case ppt && !fdseq && !word && !xl:
		return KindPPTX, ""
	}
	return "", "its content is a zip package that is neither an XPS document nor one Office document"
}
