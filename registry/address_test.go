package registry

import (
	"testing"
	"time"
)

// TestAddressSNMPAddr: every spelling of one device's address is one key;
// Host is what is looked up.
func TestAddressSNMPAddr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"MFP1", "mfp1:161"},
		{"mfp1:161", "mfp1:161"},
		{"mfp1:1161", "mfp1:1161"},
		{"10.0.0.5", "10.0.0.5:161"},
		{"[fe80::1]:161", "[fe80::1]:161"},
		{"FE80::1", "[fe80::1]:161"},
		{"[fe80::1]", "[fe80::1]:161"},
		{"host:notaport", "host:notaport"},
	} {
		if got := Address(c.in).SNMPAddr(); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"MFP1", "MFP1"}, {"mfp1:161", "mfp1"}, {"10.0.0.5", "10.0.0.5"}, {"[fe80::1]:161", "fe80::1"},
		{"FE80::1", "FE80::1"}, {"[fe80::1]", "fe80::1"}, {"host:notaport", "host:notaport"},
	} {
		if got := Address(c.in).Host(); got != c.want {
			t.Errorf("host of %q: %q, want %q", c.in, got, c.want)
		}
	}
	if !Address("MFP1").Same("mfp1:161") || Address("mfp1").Same("mfp1:162") || Address("").Same("") {
		t.Error("Same")
	}
}

// TestReachable: within two intervals and 10 s of the last answer.
func TestReachable(t *testing.T) {
	now := time.Now()
	for _, c := range []struct {
		ago  time.Duration
		want bool
	}{{0, true}, {2*time.Minute + 9*time.Second, true}, {2*time.Minute + 11*time.Second, false}} {
		if got := Reachable(now.Add(-c.ago), time.Minute); got != c.want {
			t.Errorf("seen %s ago: %v", c.ago, got)
		}
	}
	if Reachable(time.Time{}, time.Minute) {
		t.Error("never seen is reachable")
	}
}

// TestResolve: each destination gets its device (any case) and the target
// replays with the device's workstation name; a missing device is nil.
func TestResolve(t *testing.T) {
	devs := []Device{{Name: "Floor2", SysName: "KM-FLOOR2"}}
	ds := []Destination{
		{Name: "a", Host: "fs", Share: "s", Device: "floor2"},
		{Name: "b", Host: "fs", Share: "s", Device: "gone"},
		{Name: "c", Host: "fs", Share: "s", Device: "floor2", Workstation: "OWN"},
	}
	rs := Resolve(ds, devs)
	if len(rs) != 3 || rs[0].Device == nil || rs[0].Device.Name != "Floor2" || rs[0].Target.Workstation != "KM-FLOOR2" {
		t.Fatalf("a: %+v", rs[0])
	}
	if rs[1].Device != nil || rs[1].Target.Workstation != "" {
		t.Fatalf("b: %+v", rs[1])
	}
	if rs[2].Target.Workstation != "OWN" || rs[2].Name != "c" {
		t.Fatalf("c: %+v", rs[2])
	}
	// What a check's report keeps of the device's profile: every value
	// with its origin; no device, no profile.
	if p := rs[0].Profile; p == nil || p.Device != "Floor2" || len(p.Values) != len(ProfileFields) || p.Values[0].Origin == "" {
		t.Errorf("a's profile %+v", rs[0].Profile)
	}
	if rs[1].Profile != nil {
		t.Errorf("b's profile %+v", rs[1].Profile)
	}
}
