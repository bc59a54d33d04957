package smbconn

import (
	"errors"
	"testing"

	"github.com/scanwarden/scanwarden"
)

func TestParseDialect(t *testing.T) {
	for in, want := range map[string]Dialect{
		"": 0, "SMB1": DialectSMB1, "nt1": DialectSMB1, "2.0.2": DialectSMB202, "SMB2_02": DialectSMB202,
		"2.1": DialectSMB21, "smb2_10": DialectSMB21, "3.0": DialectSMB30, "SMB3": DialectSMB30, "SMB3_00": DialectSMB30,
		"3.0.2": DialectSMB302, "3.1.1": DialectSMB311, "SMB3_11": DialectSMB311, "SMB 3.1.1": DialectSMB311,
	} {
		got, err := ParseDialect(in)
		if err != nil || got != want {
			t.Errorf("ParseDialect(%q) = %v, %v; want %v", in, got, err, want)
		}
		if want != 0 {
			back, err := ParseDialect(got.String())
			if err != nil || back != want {
				t.Errorf("%v does not read back: %v, %v", got, back, err)
			}
		}
	}
	for _, in := range []string{"2", "4.0", "SMB2_22", "lanman"} {
		if _, err := ParseDialect(in); err == nil {
			t.Errorf("ParseDialect(%q) accepted", in)
		}
	}
	if !(DialectSMB1 < DialectSMB202 && DialectSMB21 < DialectSMB30 && DialectSMB302 < DialectSMB311) {
		t.Error("dialects do not compare in protocol order")
	}
	if DialectSMB21.Wire() != 0x0210 || DialectSMB311.Wire() != 0x0311 || DialectSMB1.Wire() != 0 {
		t.Error("wire revisions")
	}
	var d Dialect
	if err := d.UnmarshalText([]byte("3.0.2")); err != nil || d != DialectSMB302 {
		t.Errorf("UnmarshalText: %v %v", d, err)
	}
	if b, _ := DialectSMB21.MarshalText(); string(b) != "2.1" {
		t.Errorf("MarshalText %q", b)
	}
}

func TestParseFileType(t *testing.T) {
	for in, want := range map[string]FileType{"": "", "PDF": FileTypePDF, ".pdf": FileTypePDF, "tif": FileTypeTIFF, "TIFF": FileTypeTIFF,
		"jpg": FileTypeJPEG, "jpeg": FileTypeJPEG, "xps": FileTypeXPS, "OpenXPS": FileTypeOXPS, "oxps": FileTypeOXPS, "pdf-hc": FileTypePDF} {
		got, err := ParseFileType(in)
		if err != nil || got != want {
			t.Errorf("ParseFileType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFileType("docx"); err == nil {
		t.Error("docx accepted")
	}
	if FileType("").Ext() != ".tmp" || FileTypeTIFF.Ext() != ".tif" || DefaultFileType.Ext() != ".pdf" {
		t.Error("extensions")
	}
}

func TestDeviceValidate(t *testing.T) {
	for _, c := range []struct {
		d     Device
		field string
	}{
		{Device{}, ""},
		{Device{MinDialect: DialectSMB21, MaxDialect: DialectSMB311, FileType: FileTypePDF, NoKerberos: true}, ""},
		{Device{MaxDialect: DialectSMB21, NoEncryption: true}, ""},
		{Device{SMB1Only: true, NoEncryption: true}, ""},
		{Device{MinDialect: DialectSMB30, MaxDialect: DialectSMB21}, "device_min_dialect"},
		{Device{SMB1Only: true, MinDialect: DialectSMB21}, "device_min_dialect"},
		{Device{MaxDialect: 9}, "device_max_dialect"},
		{Device{FileType: "docx"}, "device_file_type"},
		// Over SMB 3.1.1 encryption is not withheld but judged from what
		// the server asks: replayed, not refused.
		{Device{NoEncryption: true}, ""},
		{Device{NoEncryption: true, MaxDialect: DialectSMB302}, ""},
		{Device{NoEncryption: true, MaxDialect: DialectSMB311}, ""},
	} {
		err := c.d.Validate()
		var fe *scanwarden.FieldError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v: %v", c.d, err)
		case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
			t.Errorf("%+v: %v, want field %s", c.d, err, c.field)
		}
	}
	if (Device{MaxDialect: DialectSMB1}).Normalized() != (Device{SMB1Only: true, MinDialect: DialectSMB1, MaxDialect: DialectSMB1}) {
		t.Error("max dialect SMB1 is not SMB1 only")
	}
	// NTLMv1 alone is old SMB1-only firmware; with an SMB2 dialect it is
	// replayed over SMB2/3.
	for d, smb1 := range map[Device]bool{
		{NTLMv1: true}:                            true,
		{NTLMv1: true, MinDialect: DialectSMB1}:   true,
		{NTLMv1: true, MaxDialect: DialectSMB21}:  false,
		{NTLMv1: true, MaxDialect: DialectSMB311}: false,
		{NTLMv1: true, MinDialect: DialectSMB202}: false,
		{NTLMv1: true, MaxDialect: DialectSMB1}:   true,
	} {
		if n := d.Normalized(); n.SMB1Only != smb1 || smb1 && n.MaxDialect != DialectSMB1 || !smb1 && n.MaxDialect != d.MaxDialect {
			t.Errorf("%+v normalized %+v, want SMB1 only %v", d, n, smb1)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("%+v: %v", d, err)
		}
	}
}

func TestEncryptionWithheld(t *testing.T) {
	for d, want := range map[Device]bool{
		{NoEncryption: true, MaxDialect: DialectSMB302}: true,
		{NoEncryption: true, MaxDialect: DialectSMB21}:  true,
		{NoEncryption: true, SMB1Only: true}:            true,
		{NoEncryption: true, MaxDialect: DialectSMB311}: false,
		{NoEncryption: true}:                            false,
		{MaxDialect: DialectSMB302}:                     false,
	} {
		if got := d.EncryptionWithheld(); got != want {
			t.Errorf("%+v: EncryptionWithheld %v, want %v", d, got, want)
		}
	}
}
