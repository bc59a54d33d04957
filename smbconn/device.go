package smbconn

import (
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// Device describes what the MFP's SMB client can do, when known. The zero
// value is a device nothing is known about: the check then uses
// scanwarden's own client (every dialect, signing, encryption, NTLMv2,
// Kerberos when the destination asks for it) and writes a .tmp test file.
type Device struct {
	SMB1Only  bool // firmware or setting: SMB1 (and NTLMv1) only
	NoSigning bool // firmware cannot sign SMB2 traffic
	// NTLMv1: the firmware logs on with NTLMv1. Replayed over SMB2/3 when
	// a dialect of SMB 2.0.2 or later is given (MaxDialect, MinDialect);
	// alone it is old SMB1-only firmware, replayed over SMB1 (it implies
	// SMB1Only).
	NTLMv1 bool
	// MinDialect and MaxDialect are the lowest and highest SMB dialect
	// the MFP offers (zero: not known). MaxDialect DialectSMB1 is
	// SMB1Only.
	MinDialect Dialect
	MaxDialect Dialect
	// NoEncryption: the MFP cannot encrypt SMB3 traffic.
	NoEncryption bool
	// NoKerberos: the MFP logs on with NTLM only.
	NoKerberos bool
	// FileType is what the MFP scans to; the write step's test file has
	// its type (zero: not known, a .tmp file as for no device).
	FileType FileType
}

// Known reports whether anything is known about the device's client.
func (d Device) Known() bool { return d != Device{} }

// Normalized folds the spellings of one limit into one: NTLMv1 without an
// SMB2 dialect implies SMB1Only, and SMB1Only is MaxDialect SMB1.
func (d Device) Normalized() Device {
	if d.NTLMv1 && d.MaxDialect == 0 && d.MinDialect <= DialectSMB1 {
		d.SMB1Only = true
	}
	if d.MaxDialect == DialectSMB1 {
		d.SMB1Only = true
	}
	if d.SMB1Only {
		d.MaxDialect = DialectSMB1
		if d.MinDialect == 0 {
			d.MinDialect = DialectSMB1
		}
	}
	return d
}

// EncryptionWithheld reports whether a replay of d leaves encryption out
// of its negotiate, as the MFP does: for a device that cannot encrypt and
// offers no SMB 3.1.1 (over 3.0 and 3.0.2 the capability is left out; 2.x
// has none). SMB 3.1.1 hashes its negotiate into the session's keys, so
// the SMB library's own offer leaves, encryption included: what the server
// then asks for is judged instead (the check's tree step).
func (d Device) EncryptionWithheld() bool {
	n := d.Normalized()
	return d.NoEncryption && n.MaxDialect != 0 && n.MaxDialect < DialectSMB311
}

// offered is the one dialect a replay's SMB2 negotiate names (0: every
// dialect up to 3.1.1, the SMB library's own list): the MFP's highest —
// except for a 3.1.1 MFP whose lowest is lower or not known, which offers
// the lower dialects too; the library's list is then the MFP's, and the
// check holds the server's choice against the MFP's lowest.
func (d Device) offered() Dialect {
	n := d.Normalized()
	if n.MaxDialect == DialectSMB311 && n.MinDialect != DialectSMB311 {
		return 0
	}
	return n.MaxDialect
}

// Validate names the first field a check cannot replay, as a
// *scanwarden.FieldError whose Field is device_min_dialect,
// device_max_dialect or device_file_type.
func (d Device) Validate() error {
	bad := scanwarden.BadField
	n := d.Normalized()
	switch {
	case d.MinDialect != 0 && !d.MinDialect.valid():
		return bad("device_min_dialect", d.MinDialect.String(), "not an SMB dialect ("+dialectList()+")")
	case d.MaxDialect != 0 && !d.MaxDialect.valid():
		return bad("device_max_dialect", d.MaxDialect.String(), "not an SMB dialect ("+dialectList()+")")
	case n.MinDialect != 0 && n.MaxDialect != 0 && n.MinDialect > n.MaxDialect:
		what := n.MaxDialect.String()
		if d.SMB1Only && d.MaxDialect != DialectSMB1 {
			what += " (SMB1 only)"
		}
		return bad("device_min_dialect", n.MinDialect.String(), "above the device's highest dialect "+what)
	case d.FileType != "" && !d.FileType.valid():
		return bad("device_file_type", string(d.FileType), "not a scan file type ("+fileTypeList()+")")
	}
	return nil
}

// Describe words what a replay of d does, for a report: "SMB 2.1 at
// most, no encryption, NTLMv1, writes pdf" ("" for the zero Device, which
// is scanwarden's own client).
func (d Device) Describe() string {
	if !d.Known() {
		return ""
	}
	n := d.Normalized()
	var w []string
	switch {
	case n.SMB1Only:
		w = append(w, "SMB1 only")
	case n.MinDialect != 0 && n.MaxDialect != 0:
		w = append(w, fmt.Sprintf("SMB %s to %s", n.MinDialect, n.MaxDialect))
	case n.MaxDialect != 0:
		w = append(w, fmt.Sprintf("SMB %s at most", n.MaxDialect))
	case n.MinDialect != 0:
		w = append(w, fmt.Sprintf("SMB %s at least", n.MinDialect))
	}
	for _, f := range []struct {
		on   bool
		what string
	}{{n.NoSigning, "no signing"}, {n.NoEncryption, "no encryption"}, {n.NTLMv1, "NTLMv1"}, {n.NoKerberos, "no Kerberos"}} {
		if f.on {
			w = append(w, f.what)
		}
	}
	if n.FileType != "" {
		w = append(w, "writes "+string(n.FileType))
	}
	return strings.Join(w, ", ")
}

// Dialect is an SMB dialect; the zero value is "not known". Dialects
// compare in protocol order.
type Dialect uint8

// The dialects an MFP's client may speak.
const (
	DialectSMB1 Dialect = iota + 1
	DialectSMB202
	DialectSMB21
	DialectSMB30
	DialectSMB302
	DialectSMB311
)

var dialectNames = [...]string{DialectSMB1: "SMB1", DialectSMB202: "2.0.2", DialectSMB21: "2.1", DialectSMB30: "3.0", DialectSMB302: "3.0.2", DialectSMB311: "3.1.1"}

// Wire is the dialect's SMB2 revision number (0 for SMB1 and unknown).
func (d Dialect) Wire() uint16 {
	switch d {
	case DialectSMB202:
		return 0x0202
	case DialectSMB21:
		return 0x0210
	case DialectSMB30:
		return 0x0300
	case DialectSMB302:
		return 0x0302
	case DialectSMB311:
		return 0x0311
	}
	return 0
}

func (d Dialect) valid() bool { return d >= DialectSMB1 && d <= DialectSMB311 }

// String is the dialect as ParseDialect reads it ("" when not known).
func (d Dialect) String() string {
	if d == 0 {
		return ""
	}
	if !d.valid() {
		return fmt.Sprintf("dialect(%d)", uint8(d))
	}
	return dialectNames[d]
}

// ParseDialect reads SMB1, 2.0.2, 2.1, 3.0, 3.0.2 or 3.1.1 — also in
// Samba's spelling (NT1, SMB2_02, SMB2_10, SMB3_00, SMB3_02, SMB3_11) and
// with an "SMB" prefix; "" is the zero Dialect (not known).
func ParseDialect(s string) (Dialect, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	switch t {
	case "":
		return 0, nil
	case "SMB1", "NT1", "1", "1.0", "SMB 1", "NT LM 0.12":
		return DialectSMB1, nil
	}
	t = strings.TrimPrefix(strings.TrimPrefix(t, "SMB"), " ")
	switch strings.ReplaceAll(t, "_", ".") {
	case "2.0.2", "2.02", "2.002", "202":
		return DialectSMB202, nil
	case "2.1", "2.10", "2.1.0", "210":
		return DialectSMB21, nil
	case "3.0", "3", "3.00", "3.0.0", "300":
		return DialectSMB30, nil
	case "3.0.2", "3.02", "302":
		return DialectSMB302, nil
	case "3.1.1", "3.11", "311":
		return DialectSMB311, nil
	}
	return 0, fmt.Errorf("dialect %q: want one of %s", s, dialectList())
}

func dialectList() string {
	return strings.Join(dialectNames[1:], ", ")
}

// MarshalText writes String.
func (d Dialect) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads ParseDialect's spellings.
func (d *Dialect) UnmarshalText(b []byte) error {
	v, err := ParseDialect(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// FileType is the kind of file an MFP scans to; "" is not known.
type FileType string

// The file types a Kyocera MFP scans to an SMB folder. A high-compression
// PDF is a PDF.
const (
	FileTypePDF  FileType = "pdf"
	FileTypeTIFF FileType = "tiff"
	FileTypeJPEG FileType = "jpeg"
	FileTypeXPS  FileType = "xps"
	FileTypeOXPS FileType = "oxps"
)

// DefaultFileType is what an MFP scans to unless set otherwise.
const DefaultFileType = FileTypePDF

var fileTypes = []FileType{FileTypePDF, FileTypeTIFF, FileTypeJPEG, FileTypeXPS, FileTypeOXPS}

// FileTypes lists the known file types.
func FileTypes() []FileType { return append([]FileType(nil), fileTypes...) }

func (f FileType) valid() bool {
	for _, t := range fileTypes {
		if f == t {
			return true
		}
	}
	return false
}

// Ext is the file name extension the MFP gives such a file, with its dot
// (".tmp" when the type is not known).
func (f FileType) Ext() string {
	switch f {
	case FileTypePDF:
		return ".pdf"
	case FileTypeTIFF:
		return ".tif"
	case FileTypeJPEG:
		return ".jpg"
	case FileTypeXPS:
		return ".xps"
	case FileTypeOXPS:
		return ".oxps"
	}
	return ".tmp"
}

// String is the type as ParseFileType reads it.
func (f FileType) String() string { return string(f) }

// ParseFileType reads pdf, tiff (tif), jpeg (jpg), xps or oxps (openxps),
// case-insensitive, with or without a leading dot; "" is not known.
func ParseFileType(s string) (FileType, error) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), ".")
	switch t {
	case "":
		return "", nil
	case "tif":
		t = "tiff"
	case "jpg":
		t = "jpeg"
	case "openxps":
		t = "oxps"
	case "pdf-hc", "hc-pdf", "high-compression-pdf":
		t = "pdf"
	}
	if f := FileType(t); f.valid() {
		return f, nil
	}
	return "", fmt.Errorf("file type %q: want one of %s", s, fileTypeList())
}

func fileTypeList() string {
	s := make([]string, len(fileTypes))
	for i, t := range fileTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// MarshalText writes the type.
func (f FileType) MarshalText() ([]byte, error) { return []byte(f), nil }

// UnmarshalText reads ParseFileType's spellings.
func (f *FileType) UnmarshalText(b []byte) error {
	v, err := ParseFileType(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}
