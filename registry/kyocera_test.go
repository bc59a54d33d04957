package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
)

func TestKyoceraPasswordKnownAnswers(t *testing.T) {
	// The documented known answer.
	if got, err := DecodePassword("ED1CE55E30053916"); err != nil || got != "swb333" {
		t.Fatalf("ED1CE55E30053916 = %q, %v; want swb333", got, err)
	}
	if got, err := DecodePassword("ed1ce55e30053916"); err != nil || got != "swb333" {
		t.Fatalf("lower-case hex: %q, %v", got, err)
	}
	if got := EncodePassword("swb333"); got != "ED1CE55E30053916" {
		t.Fatalf("encode swb333 = %s", got)
	}
	for _, pw := range []string{"", "a", "1234567", "12345678", "Pässwörd with spaces & <xml>", strings.Repeat("x", 100)} {
		enc := EncodePassword(pw)
		if pw != "" && len(enc)%16 != 0 {
			t.Errorf("%q: %d hex digits", pw, len(enc))
		}
		if got, err := DecodePassword(enc); err != nil || got != pw {
			t.Errorf("round trip %q: %q %v", pw, got, err)
		}
	}
}

func TestKyoceraPasswordRefused(t *testing.T) {
	for name, h := range map[string]string{
		"not hex":       "ZZ1CE55E30053916",
		"odd length":    "ED1CE55E3005391",
		"short block":   "ED1CE55E",
		"long block":    "ED1CE55E30053916AB",
		"bad padding":   "00000000000000000000000000000000",
		"huge":          strings.Repeat("00", 1000),
		"whitespace in": "ED1C E55E30053916",
	} {
		got, err := DecodePassword(h)
		if err == nil {
			t.Errorf("%s: decoded to %q", name, got)
			continue
		}
		if strings.Contains(err.Error(), h) {
			t.Errorf("%s: the error repeats the value: %v", name, err)
		}
	}
}

func FuzzDecodePassword(f *testing.F) {
	f.Add("ED1CE55E30053916")
	f.Add("")
	f.Add("00")
	f.Fuzz(func(t *testing.T, h string) {
		pw, err := DecodePassword(h)
		if err != nil {
			return
		}
		if back, err := DecodePassword(EncodePassword(pw)); err != nil || back != pw {
			t.Fatalf("%q → %q → %q %v", h, pw, back, err)
		}
	})
}

func TestValidateFieldErrors(t *testing.T) {
	ok := Destination{Name: "a", Host: "h", Share: "s", Source: SourceAdded}
	for field, d := range map[string]Destination{
		"name":         {Name: "-a", Host: "h", Share: "s", Source: SourceAdded},
		"host":         {Name: "a", Host: "h x", Share: "s", Source: SourceAdded},
		"port":         {Name: "a", Host: "h", Port: 70000, Share: "s", Source: SourceAdded},
		"share":        {Name: "a", Host: "h", Share: "s:", Source: SourceAdded},
		"path":         {Name: "a", Host: "h", Share: "s", Path: "x/../y", Source: SourceAdded},
		"display_name": {Name: "a", Host: "h", Share: "s", DisplayName: "a\nb", Source: SourceAdded},
		"source":       {Name: "a", Host: "h", Share: "s"},
	} {
		var fe *scanwarden.FieldError
		if err := d.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v", field, err)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
	var fe *scanwarden.FieldError
	if err := (Device{Name: "m", SNMP: SNMP{Version: "4"}}).Validate(); !errors.As(err, &fe) || fe.Field != "snmp_version" {
		t.Errorf("device: %v", err)
	}
}

// A value shows in the message as typed: quoted, never Go-escaped (an
// admin copies a path's single backslashes back into the panel).
func TestFieldErrorShowsValueAsTyped(t *testing.T) {
	err := Destination{Name: "a", Host: "h", Share: "s", Path: `scans\..\hr`, Source: SourceAdded}.Validate()
	if err == nil || err.Error() != `path "scans\..\hr": contains ..` {
		t.Errorf("%v", err)
	}
}
