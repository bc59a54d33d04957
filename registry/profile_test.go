package registry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

func TestProfileOrigins(t *testing.T) {
	at := time.Date(2026, 12, 6, 6, 10, 0, 0, time.UTC)
	var p registry.Profile
	p = p.Learn(samba.Observation{Address: "10.0.0.5", At: at, Dialect: "SMB2_10", Password: "NTLMv2", Workstation: "MFP01", User: "scan", Domain: "KYOLAB"})
	p = p.Learn(samba.Observation{Address: "10.0.0.5", At: at, FileType: "tiff"})
	p.Admin = map[registry.ProfileField]string{registry.FieldMaxDialect: "2.0.2"}
	d := registry.Device{Name: "mfp", Model: "TASKalfa 3253ci", Profile: p}
	got := map[registry.ProfileField]registry.ProfileValue{}
	for _, v := range d.Values() {
		got[v.Field] = v
	}
	for _, c := range []struct {
		f      registry.ProfileField
		value  string
		origin registry.Origin
	}{
		{registry.FieldMaxDialect, "2.0.2", registry.OriginAdmin}, // the admin wins over seen 2.1
		{registry.FieldMinDialect, "", registry.OriginUnknown},    // one negotiate shows no lowest
		{registry.FieldSigning, "yes", registry.OriginSeen},
		{registry.FieldEncryption, "no", registry.OriginSeen}, // SMB 2.1 has none
		{registry.FieldNTLM, "v2", registry.OriginSeen},
		{registry.FieldKerberos, "", registry.OriginUnknown}, // the fallback share cannot show it
		{registry.FieldFileType, "tiff", registry.OriginSeen},
	} {
		v := got[c.f]
		if v.Value != c.value || v.Origin != c.origin {
			t.Errorf("%s = %q (%s), want %q (%s)", c.f, v.Value, v.Origin, c.value, c.origin)
		}
	}
	if v := got[registry.FieldMaxDialect]; v.Seen != "2.1" {
		t.Errorf("max_dialect hides what was seen: %+v", v)
	}
	if v := got[registry.FieldNTLM]; v.SeenAt == nil || !v.SeenAt.Equal(at) || v.Session != "from 10.0.0.5, SMB 2.1, NTLMv2, workstation MFP01, user KYOLAB\\scan" {
		t.Errorf("ntlm's session: %+v", v)
	}
	if p.UserForm.Value != `KYOLAB\scan` || p.Workstation.Value != "MFP01" {
		t.Errorf("user form %q, workstation %q", p.UserForm.Value, p.Workstation.Value)
	}
	c := d.Client()
	want := smbcheck.Device{MaxDialect: smbcheck.DialectSMB202, NoEncryption: true, FileType: smbcheck.FileTypeTIFF}
	if c != want {
		t.Errorf("client %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("a learned client does not validate: %v", err)
	}
}

// A device never seen on the fallback share: its family's defaults, said
// as such, and the check's client is scanwarden's own but for the file type.
func TestProfileNeverSeen(t *testing.T) {
	d := registry.Device{Name: "new", Model: "ECOSYS M3655idn"}
	for _, v := range d.Values() {
		switch v.Field {
		case registry.FieldFileType:
			if v.Value != "pdf" || v.Origin != registry.OriginDefault || v.Note == "" {
				t.Errorf("file type %+v", v)
			}
		default:
			if v.Value != "" || v.Origin != registry.OriginUnknown {
				t.Errorf("%s = %+v, want unknown", v.Field, v)
			}
		}
	}
	if j := d.ProfileJSON(); j.Learned || j.Hint != registry.LearnHint {
		t.Errorf("json %+v", j)
	}
	if c := d.Client(); c != (smbcheck.Device{FileType: smbcheck.FileTypePDF}) {
		t.Errorf("client %+v", c)
	}
	var none *registry.Device
	if c := none.Client(); c != (smbcheck.Device{}) {
		t.Errorf("no device: %+v", c)
	}
	if c := none.ClientWith(map[registry.ProfileField]string{registry.FieldMaxDialect: "2.1", registry.FieldEncryption: "no"}); c != (smbcheck.Device{MaxDialect: smbcheck.DialectSMB21, NoEncryption: true}) {
		t.Errorf("one-off flags: %+v", c)
	}
}

func TestProfileSMB1Seen(t *testing.T) {
	p := registry.Profile{}.Learn(samba.Observation{Address: "10.0.0.6", At: time.Now(), Dialect: "NT1", Password: "NTLMv1"})
	c := (&registry.Device{Profile: p}).Client()
	if !c.SMB1Only || c.MaxDialect != smbcheck.DialectSMB1 || c.MinDialect != smbcheck.DialectSMB1 || !c.NTLMv1 || !c.NoEncryption || c.NoSigning {
		t.Errorf("SMB1 client %+v", c)
	}
}

func TestParseProfileValue(t *testing.T) {
	for _, c := range []struct {
		f       registry.ProfileField
		in, out string
	}{
		{registry.FieldMaxDialect, "SMB2_10", "2.1"}, {registry.FieldMaxDialect, "3.1.1", "3.1.1"}, {registry.FieldMinDialect, "smb1", "SMB1"},
		{registry.FieldEncryption, "No", "no"}, {registry.FieldNTLM, "NTLMv1", "v1"}, {registry.FieldFileType, "PDF", "pdf"},
		{registry.FieldFileType, "openxps", "oxps"}, {registry.FieldFileType, "tif", "tiff"},
	} {
		got, err := registry.ParseProfileValue(c.f, c.in)
		if err != nil || got != c.out {
			t.Errorf("%s %q: %q, %v; want %q", c.f, c.in, got, err, c.out)
		}
	}
	for _, c := range []struct {
		f  registry.ProfileField
		in string
	}{{registry.FieldMaxDialect, "4.0"}, {registry.FieldMaxDialect, ""}, {registry.FieldSigning, "maybe"}, {registry.FieldNTLM, "v3"}, {registry.FieldFileType, "docx"}} {
		_, err := registry.ParseProfileValue(c.f, c.in)
		var fe *scanwarden.FieldError
		if !errors.As(err, &fe) || fe.Field != "device_"+string(c.f) {
			t.Errorf("%s %q: %v, want a field error naming device_%s", c.f, c.in, err, c.f)
		}
	}
}

// Device-provided text is kept bounded and printable.
func TestProfileLearnCleans(t *testing.T) {
	long := string(make([]byte, 600))
	p := registry.Profile{}.Learn(samba.Observation{Address: "10.0.0.7", At: time.Now(), Workstation: "A\x1b]52;c;x\x07" + long, User: "u"})
	if w := p.Workstation.Value; len(w) > 256 || w[1] != '?' {
		t.Errorf("workstation %q", w)
	}
}
