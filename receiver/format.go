package receiver

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// format is what the file's own bytes say about its completeness.
type format int

const (
	formatComplete   format = iota // it checks out
	formatIncomplete               // its type's end marker or structure is missing
	formatUnknown                  // no check for this type: the quiet window decides
)

// checkFormat reads the file's type from its first bytes and checks its end:
// a PDF ends with %%EOF within its last KiB, a JPEG with FFD9 (trailing
// padding allowed), a TIFF's IFD chain lies inside the file. why says what
// is missing.
func checkFormat(f *os.File, size int64) (format, string, error) {
	head := make([]byte, 8)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return formatUnknown, "", err
	}
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return checkPDF(f, size)
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8}):
		return checkJPEG(f, size)
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return checkTIFF(f, size)
	}
	return formatUnknown, "", nil
}

func readTail(f *os.File, size, n int64) ([]byte, error) {
	n = min(n, size)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, size-n); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

func checkPDF(f *os.File, size int64) (format, string, error) {
	t, err := readTail(f, size, 1024)
	if err != nil {
		return formatUnknown, "", err
	}
	if bytes.Contains(t, []byte("%%EOF")) {
		return formatComplete, "", nil
	}
	return formatIncomplete, "PDF without %%EOF in its last KiB (cut short)", nil
}

func checkJPEG(f *os.File, size int64) (format, string, error) {
	t, err := readTail(f, size, 1024)
	if err != nil {
		return formatUnknown, "", err
	}
	t = bytes.TrimRight(t, "\x00\r\n ") // padding some writers add
	if bytes.HasSuffix(t, []byte{0xFF, 0xD9}) {
		return formatComplete, "", nil
	}
	return formatIncomplete, "JPEG without its end marker FFD9 (cut short)", nil
}

// maxIFDs bounds the IFD chain a hostile TIFF could loop.
const maxIFDs = 4096

func checkTIFF(f *os.File, size int64) (format, string, error) {
	var hdr [8]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return formatIncomplete, "TIFF shorter than its header", nil
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if hdr[0] == 'M' {
		bo = binary.BigEndian
	}
	off := int64(bo.Uint32(hdr[4:]))
	seen := map[int64]bool{}
	for i := 0; off != 0; i++ {
		if i >= maxIFDs || seen[off] {
			return formatIncomplete, "TIFF IFD chain loops", nil
		}
		seen[off] = true
		if off < 8 || off+2 > size {
			return formatIncomplete, fmt.Sprintf("TIFF IFD at offset %d lies outside the file (%d bytes): cut short", off, size), nil
		}
		var cnt [2]byte
		if _, err := f.ReadAt(cnt[:], off); err != nil {
			return formatUnknown, "", err
		}
		n := int64(bo.Uint16(cnt[:]))
		end := off + 2 + 12*n + 4
		if end > size {
			return formatIncomplete, fmt.Sprintf("TIFF IFD at offset %d runs past the end of the file: cut short", off), nil
		}
		// every entry's out-of-line data must lie inside the file too
		ents := make([]byte, 12*n+4)
		if _, err := f.ReadAt(ents, off+2); err != nil {
			return formatUnknown, "", err
		}
		for e := int64(0); e < n; e++ {
			ent := ents[12*e:]
			typ, count := bo.Uint16(ent[2:]), int64(bo.Uint32(ent[4:]))
			if sz := tiffTypeSize(typ) * count; sz > 4 {
				if p := int64(bo.Uint32(ent[8:])); p+sz > size {
					return formatIncomplete, fmt.Sprintf("TIFF tag %d's data lies past the end of the file: cut short", bo.Uint16(ent)), nil
				}
			}
			// strips and tiles: offsets + byte counts must fit (checked when both are inline single values)
		}
		if err := tiffStrips(f, bo, ents[:12*n], size); err != "" {
			return formatIncomplete, err, nil
		}
		off = int64(bo.Uint32(ents[12*n:]))
	}
	return formatComplete, "", nil
}

func tiffTypeSize(t uint16) int64 {
	switch t {
	case 1, 2, 6, 7:
		return 1
	case 3, 8:
		return 2
	case 4, 9, 11:
		return 4
	case 5, 10, 12:
		return 8
	}
	return 0
}

// tiffStrips checks that the image data of an IFD with one strip or tile
// (the common scan case) lies inside the file.
func tiffStrips(f *os.File, bo binary.ByteOrder, ents []byte, size int64) string {
	val := func(tag uint16) (int64, bool) {
		for i := 0; i+12 <= len(ents); i += 12 {
			e := ents[i:]
			if bo.Uint16(e) != tag || bo.Uint32(e[4:]) != 1 {
				continue
			}
			switch bo.Uint16(e[2:]) {
			case 3:
				return int64(bo.Uint16(e[8:])), true
			case 4:
				return int64(bo.Uint32(e[8:])), true
			}
		}
		return 0, false
	}
	for _, pair := range [][2]uint16{{273, 279}, {324, 325}} { // StripOffsets/StripByteCounts, TileOffsets/TileByteCounts
		o, ok1 := val(pair[0])
		n, ok2 := val(pair[1])
		if ok1 && ok2 && o+n > size {
			return fmt.Sprintf("TIFF image data (%d bytes at %d) runs past the end of the file: cut short", n, o)
		}
	}
	return ""
}

// junkReason says why a file name is junk the MFP did not send as a scan
// (a Mac's ._ files, Windows' Thumbs.db, Office lock files, temporary
// files), or "".
func junkReason(name string) string {
	base := path.Base(name)
	low := strings.ToLower(base)
	switch {
	case strings.HasPrefix(base, "._"):
		return "macOS resource fork (._*)"
	case low == "thumbs.db" || low == "desktop.ini" || low == ".ds_store":
		return "folder metadata (" + base + ")"
	case strings.HasPrefix(base, "~$"):
		return "Office lock file (~$*)"
	case strings.HasSuffix(low, ".tmp"):
		return "temporary file (*.tmp)"
	}
	return ""
}
