package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestDeviceProfileCLI: device add's --device-* flags store the admin's
// values (kept when the device is added again without them, dropped by
// --device-clear), show and list --json carry each value with its origin,
// and values no check could replay are refused naming the flag or field.
func TestDeviceProfileCLI(t *testing.T) {
	isolate(t)
	data := filepath.Join(t.TempDir(), "data")
	cli := cliIn(t, data)
	show := func() registry.ProfileJSON {
		t.Helper()
		var out struct {
			SMBProfile registry.ProfileJSON `json:"smb_profile"`
		}
		if err := json.Unmarshal([]byte(cli(exitOK, "device", "show", "mfp01", "--json").stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out.SMBProfile
	}
	value := func(p registry.ProfileJSON, f registry.ProfileField) registry.ProfileValue {
		for _, v := range p.Values {
			if v.Field == f {
				return v
			}
		}
		return registry.ProfileValue{}
	}
	cli(exitOK, "device", "add", "mfp01", "--address", "10.77.0.40")
	p := show()
	if p.Learned || p.Hint == "" || value(p, registry.FieldFileType).Origin != registry.OriginDefault || value(p, registry.FieldMaxDialect).Origin != registry.OriginUnknown {
		t.Fatalf("a new device's profile: %+v", p)
	}
	if r := cli(exitOK, "device", "show", "mfp01"); !strings.Contains(r.stdout, "never seen on the fallback share") || !strings.Contains(r.stdout, "file type") {
		t.Errorf("show: %s", r.stdout)
	}
	cli(exitOK, "device", "add", "mfp01", "--device-max-dialect", "SMB2_10", "--device-no-encryption", "--device-file-type", "TIF", "--device-no-kerberos")
	cli(exitOK, "device", "add", "mfp01", "--model", "TASKalfa 3253ci") // kept
	p = show()
	for f, want := range map[registry.ProfileField]string{registry.FieldMaxDialect: "2.1", registry.FieldEncryption: "no", registry.FieldFileType: "tiff", registry.FieldKerberos: "no"} {
		if v := value(p, f); v.Value != want || v.Origin != registry.OriginAdmin {
			t.Errorf("%s = %+v, want %s from the admin", f, v, want)
		}
	}
	cli(exitOK, "device", "add", "mfp01", "--device-clear", "file_type,kerberos")
	p = show()
	if v := value(p, registry.FieldFileType); v.Origin != registry.OriginDefault || v.Value != "pdf" {
		t.Errorf("cleared file type: %+v", v)
	}
	var list struct {
		Devices []struct {
			SMBProfile registry.ProfileJSON `json:"smb_profile"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(cli(exitOK, "device", "list", "--json").stdout), &list); err != nil || len(list.Devices) != 1 || value(list.Devices[0].SMBProfile, registry.FieldMaxDialect).Value != "2.1" {
		t.Errorf("list --json: %v %+v", err, list)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--device-max-dialect", "4.0"}, "device_max_dialect"},
		{[]string{"--device-file-type", "docx"}, "device_file_type"},
		{[]string{"--device-min-dialect", "3.1.1"}, "device_min_dialect"}, // above the stored max 2.1
		{[]string{"--device-smb1-only", "--device-max-dialect", "2.1"}, "exclude"},
		{[]string{"--device-clear", "colour"}, "colour"},
		{[]string{"--device-clear", "encryption", "--device-no-encryption"}, "exclude"},
	} {
		r := runCLI(t, nil, "", append(append([]string{"device", "add", "mfp01"}, bad.args...), "--data-dir", data)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", bad.args, r.code, r.stderr, bad.want)
		}
	}
}

// TestCheckDestinationReplaysDeviceProfile: `check --destination` replays
// as the stored device's client (no flag given), a one-off flag goes over
// it, and --json carries the profile replayed. The destination is a
// loopback port nothing listens on: nothing leaves the box.
func TestCheckDestinationReplaysDeviceProfile(t *testing.T) {
	isolate(t)
	data := filepath.Join(t.TempDir(), "data")
	cli := cliIn(t, data)
	cli(exitOK, "device", "add", "mfp01", "--device-max-dialect", "2.1", "--device-no-encryption")
	cli(exitOK, "destination", "add", "front", "//127.0.0.1:9/scans", "--user", "u", "--no-password", "--device", "mfp01")
	r := cli(exitFinding, "check", "--destination", "front", "--timeout", "2s")
	if !strings.Contains(r.stdout, "replaying as device mfp01's SMB client: max dialect 2.1 (set by hand), encryption no (set by hand), file type pdf (default)") {
		t.Errorf("check --destination does not replay the device's profile:\n%s", r.stdout)
	}
	r = cli(exitFinding, "check", "--destination", "front", "--timeout", "2s", "--device-file-type", "tiff", "--json")
	var out struct {
		DeviceProfile []registry.ProfileValue `json:"device_profile"`
		Profile       *smbcheck.Profile       `json:"profile"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	// The report itself says which profile it replayed, with the sources.
	if p := out.Profile; p == nil || p.Own || p.Device != "mfp01" || p.Summary != "SMB 2.1 at most, no encryption, writes tiff" || len(p.Values) != len(registry.ProfileFields) {
		t.Errorf("--json profile %+v", out.Profile)
	}
	got := map[registry.ProfileField]string{}
	for _, v := range out.DeviceProfile {
		got[v.Field] = v.Value
	}
	if got[registry.FieldMaxDialect] != "2.1" || got[registry.FieldEncryption] != "no" || got[registry.FieldFileType] != "tiff" {
		t.Errorf("--json device_profile %+v", out.DeviceProfile)
	}
}

// TestCheckJSONProfileKeys: `check --json` keeps the older device_profile
// beside the report's profile. Where the device's profile is replayed,
// profile.values is device_profile's field, value, origin and seen_at,
// value for value; for a bridged destination (scanwarden's own client
// replayed) profile says own_client and lists no values, while
// device_profile still lists the device's.
func TestCheckJSONProfileKeys(t *testing.T) {
	isolate(t)
	data := filepath.Join(t.TempDir(), "data")
	cli := cliIn(t, data)
	cli(exitOK, "device", "add", "mfp01", "--device-max-dialect", "2.1", "--device-no-encryption")
	cli(exitOK, "destination", "add", "front", "//127.0.0.1:9/scans", "--user", "u", "--no-password", "--device", "mfp01")
	read := func() (dp []registry.ProfileValue, p *smbcheck.Profile) {
		t.Helper()
		r := cli(exitFinding, "check", "--destination", "front", "--timeout", "2s", "--device-file-type", "tiff", "--json")
		var out struct {
			DeviceProfile []registry.ProfileValue `json:"device_profile"`
			Profile       *smbcheck.Profile       `json:"profile"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out.DeviceProfile, out.Profile
	}
	dp, p := read()
	if p == nil || p.Own || len(dp) != len(registry.ProfileFields) || len(p.Values) != len(dp) {
		t.Fatalf("profile %+v, device_profile %+v", p, dp)
	}
	for i, v := range dp {
		pv := p.Values[i]
		if pv.Field != string(v.Field) || pv.Value != v.Value || pv.Origin != string(v.Origin) || !reflect.DeepEqual(pv.SeenAt, v.SeenAt) {
			t.Errorf("profile.values[%d] %+v, device_profile[%d] %+v", i, pv, i, v)
		}
	}
	cli(exitOK, "destination", "bridge", "front")
	dp, p = read()
	if p == nil || !p.Own || p.Device != "mfp01" || len(p.Values) != 0 || len(dp) != len(registry.ProfileFields) {
		t.Errorf("bridged: profile %+v, device_profile %+v", p, dp)
	}
}
