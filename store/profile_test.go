package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestDeviceProfileStored: seen values, the admin's settings and their
// clearing survive the store; an older observation (smbd's log read again
// from its start) never replaces a newer one; a profile no check could
// replay is refused; the destination's target carries the device's client.
func TestDeviceProfileStored(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	if err := s.Devices().PutDevice(ctx, registry.Device{Name: "mfp01", Address: "10.77.0.40"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: "front", Host: "fs1", Share: "scans", User: "u", Password: scanwarden.NewSecret("p"), Device: "mfp01"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC)
	learn := func(at time.Time, dialect string, wantChanged bool) {
		t.Helper()
		changed, err := s.Devices().LearnDevice(ctx, "mfp01", samba.Observation{Address: "10.77.0.40", At: at, Dialect: dialect, Password: "NTLMv2", Workstation: "MFP01", User: "mfp"})
		if err != nil {
			t.Fatal(err)
		}
		if changed != wantChanged {
			t.Errorf("learn %s at %v: changed %v, want %v", dialect, at, changed, wantChanged)
		}
	}
	learn(t0, "SMB2_10", true)
	learn(t0.Add(-time.Hour), "SMB3_11", false)  // an older line read again
	learn(t0.Add(time.Second), "SMB2_10", false) // the same client again
	d, err := s.Devices().Device(ctx, "mfp01")
	if err != nil {
		t.Fatal(err)
	}
	if o := d.Profile.Seen[registry.FieldMaxDialect]; o.Value != "2.1" || !o.At.Equal(t0.Add(time.Second)) || o.Session == "" {
		t.Errorf("seen max dialect %+v, want 2.1 at %v", o, t0)
	}
	if d.Profile.Workstation.Value != "MFP01" || d.Profile.UserForm.Value != "mfp" {
		t.Errorf("workstation %+v user form %+v", d.Profile.Workstation, d.Profile.UserForm)
	}
	r, err := s.Destinations().Target(ctx, "front")
	if err != nil {
		t.Fatal(err)
	}
	if want := (smbcheck.Device{MaxDialect: smbcheck.DialectSMB21, NoEncryption: true, FileType: smbcheck.FileTypePDF}); r.Client != want {
		t.Errorf("target's client %+v, want %+v", r.Client, want)
	}
	if err := s.Devices().SetDeviceProfile(ctx, "mfp01", map[registry.ProfileField]string{registry.FieldFileType: "tiff", registry.FieldMaxDialect: "2.0.2"}, nil); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Destinations().Targets(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if c := rs[0].Client; c.FileType != smbcheck.FileTypeTIFF || c.MaxDialect != smbcheck.DialectSMB202 {
		t.Errorf("after the admin's setting: %+v", c)
	}
	learn(t0.Add(time.Minute), "SMB2_10", false) // seen again: the admin still wins
	if err := s.Devices().SetDeviceProfile(ctx, "mfp01", nil, []registry.ProfileField{registry.FieldMaxDialect}); err != nil {
		t.Fatal(err)
	}
	d, _ = s.Devices().Device(ctx, "mfp01")
	if vs := d.Values(); vs[0].Value != "2.1" || vs[0].Origin != registry.OriginSeen || vs[6].Value != "tiff" || vs[6].Origin != registry.OriginAdmin {
		t.Errorf("after clearing max_dialect: %+v", vs)
	}
	// A lowest dialect above the highest (seen: 2.1) is no client a
	// check can replay.
	err = s.Devices().SetDeviceProfile(ctx, "mfp01", map[registry.ProfileField]string{registry.FieldMinDialect: "3.1.1"}, nil)
	var fe *scanwarden.FieldError
	if !errors.As(err, &fe) || fe.Field != "device_min_dialect" {
		t.Errorf("min 3.1.1 above max 2.1: %v", err)
	}
	if err := s.Devices().SetDeviceProfile(ctx, "nosuch", map[registry.ProfileField]string{registry.FieldFileType: "pdf"}, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown device: %v", err)
	}
	if err := s.Devices().SetDeviceProfile(ctx, "mfp01", map[registry.ProfileField]string{registry.FieldFileType: "docx"}, nil); !errors.As(err, &fe) {
		t.Errorf("file type docx: %v", err)
	}
	if err := s.Devices().RemoveDevice(ctx, "mfp01", true); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM device_profile").Scan(&n); err != nil || n != 0 {
		t.Errorf("profile rows left after removal: %d %v", n, err)
	}
}
