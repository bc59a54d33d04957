package receiver

import (
	"archive/zip"
	"bytes"
	"io"
	"path"
	"strings"
	"testing"
)

// zipOf builds a zip with the named (empty-bodied) parts.
func zipOf(names ...string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, _ := zw.Create(n)
		w.Write([]byte("<x/>"))
	}
	zw.Close()
	return b.Bytes()
}

var (
	samplePDF  = []byte("%PDF-1.7\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
	sampleEXE  = append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff"), make([]byte, 200)...)
	sampleLNK  = append([]byte{0x4C, 0x00, 0x00, 0x00, 0x01, 0x14, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC0}, make([]byte, 100)...)
	sampleURL  = []byte("[InternetShortcut]\r\nURL=file://10.77.0.66/share/x\r\nIconFile=\\\\10.77.0.66\\share\\icon.ico\r\n")
	sampleSCF  = []byte("[Shell]\r\nCommand=2\r\nIconFile=\\\\10.77.0.66\\share\\test.ico\r\n[Taskbar]\r\nCommand=ToggleDesktop\r\n")
	sampleDOCX = zipOf("[Content_Types].xml", "_rels/.rels", "word/document.xml", "word/styles.xml")
	sampleXLSX = zipOf("[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml")
	samplePPTX = zipOf("[Content_Types].xml", "_rels/.rels", "ppt/presentation.xml")
	sampleXPS  = zipOf("[Content_Types].xml", "_rels/.rels", "FixedDocumentSequence.fdseq", "Documents/1/FixedDocument.fdoc", "Documents/1/Pages/1.fpage")
	sampleOXPS = zipOf("[Content_Types].xml", "_rels/.rels", "FixedDocSeq.fdseq", "Documents/1/Pages/1.fpage")
	sampleDOCM = zipOf("[Content_Types].xml", "word/document.xml", "word/vbaProject.bin")
	sampleZIP  = zipOf("invoice.pdf.exe")
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		ok   bool
		why  string // a part of the reason when refused
	}{
		{"scan.pdf", samplePDF, true, ""},
		{"SCAN.PDF", samplePDF, true, ""},
		{"scan.tif", []byte("II*\x00\x08\x00\x00\x00"), true, ""},
		{"scan.tiff", []byte("MM\x00*\x00\x00\x00\x08"), true, ""},
		{"scan.jpg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0xFF, 0xD9}, true, ""},
		{"scan.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"), true, ""},
		{"scan.xps", sampleXPS, true, ""},
		{"scan.oxps", sampleOXPS, true, ""},
		{"scan.docx", sampleDOCX, true, ""},
		{"scan.xlsx", sampleXLSX, true, ""},
		{"scan.pptx", samplePPTX, true, ""},
		{"ocr.txt", []byte("Rechnung Nr. 42 – Grüße\r\n\tSumme: 12,00 €\f\n"), true, ""},
		// refused
		{"setup.exe", sampleEXE, false, "Windows program"},
		{"invoice.pdf", sampleEXE, false, "Windows program"},
		{"scan.exe", samplePDF, false, `ends in ".exe"`},
		{"scan", samplePDF, false, "no extension"},
		{"scan.jpg", samplePDF, false, `its content is PDF but its name ends in ".jpg"`},
		{"scan.lnk", sampleLNK, false, "shortcut"},
		{"scan.pdf", sampleLNK, false, "shortcut"},
		{"desktop.url", sampleURL, false, "shell file ([internetshortcut])"},
		{"notes.txt", sampleURL, false, "shell file"},
		{"@evil.scf", sampleSCF, false, "shell file ([shell])"},
		{"scan.docx", sampleDOCM, false, "macros"},
		{"scan.docx", sampleXPS, false, "(DOCX)"},
		{"scan.xps", sampleZIP, false, "carries"},
		{"scan.xps", zipOf("a.txt"), false, "zip archive"},
		{"scan.docx", zipOf("[Content_Types].xml", "word/document.xml", "xl/workbook.xml"), false, "neither"},
		{"scan.xps", sampleXPS[:len(sampleXPS)-10], false, "end record"},
		{"scan.txt", []byte("text\x00with NUL"), false, "not a format"},
		{"scan.txt", []byte{}, false, "not a format"},
		{"scan.pdf", []byte("\xff\xfe%\x00P\x00"), false, "not a format"},
	} {
		k, ok, why := Sniff(bytes.NewReader(c.data), int64(len(c.data)), c.name)
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("%s (%d bytes): kind %q ok %v why %q; want ok %v with %q", c.name, len(c.data), k, ok, why, c.ok, c.why)
		}
	}
}

// A text file is judged by its first and last 64 KiB; a long one with a NUL
// at the end is not text, a character cut at the window's edge is.
func TestSniffLongText(t *testing.T) {
	long := bytes.Repeat([]byte("äöü line of OCR text\n"), 20000)
	if _, ok, why := Sniff(bytes.NewReader(long), int64(len(long)), "ocr.txt"); !ok {
		t.Errorf("long text refused: %s", why)
	}
	bad := append(append([]byte{}, long...), 0)
	if _, ok, _ := Sniff(bytes.NewReader(bad), int64(len(bad)), "ocr.txt"); ok {
		t.Error("a NUL at the end of a long text was not seen")
	}
}

// boundedReader counts what the sniffer reads.
type boundedReader struct {
	r    io.ReaderAt
	read int64
}

func (b *boundedReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.r.ReadAt(p, off)
	b.read += int64(n)
	return n, err
}

// sniffReadBound is the most the sniffer may read of any file.
const sniffReadBound = sniffHead + 2*textWindow + zipEOCDMax + zipMaxCD

// FuzzSniff: any bytes under any name — no panic, reads bounded, and what
// is let through is a known kind under one of its own extensions.
func FuzzSniff(f *testing.F) {
	for _, s := range [][]byte{samplePDF, sampleEXE, sampleLNK, sampleURL, sampleSCF, sampleDOCX, sampleXLSX, samplePPTX, sampleXPS,
		sampleOXPS, sampleDOCM, sampleZIP, []byte("II*\x00"), []byte("plain text\n")} {
		for _, n := range []string{"scan.pdf", "scan.xps", "scan.docx", "scan.txt", "scan.exe"} {
			f.Add(s, n)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		br := &boundedReader{r: bytes.NewReader(data)}
		k, ok, why := Sniff(br, int64(len(data)), name)
		if br.read > sniffReadBound {
			t.Fatalf("read %d bytes (bound %d)", br.read, sniffReadBound)
		}
		if ok {
			if why != "" {
				t.Fatalf("ok with a reason %q", why)
			}
			if extKinds[strings.ToLower(path.Ext(name))] != k {
				t.Fatalf("%q let through as %s", name, k)
			}
		} else if why == "" {
			t.Fatal("refused without a reason")
		}
	})
}
