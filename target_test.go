package scanwarden

import (
	"strings"
	"testing"
)

func TestParseDestination(t *testing.T) {
	tests := []struct {
		in                string
		host, share, path string
		port              int
		err               bool
	}{
		{in: "//fs1/scans", host: "fs1", share: "scans"},
		{in: "//fs1:139/scans/alice/in", host: "fs1", port: 139, share: "scans", path: "alice/in"},
		{in: `\\fs1\scans\alice`, host: "fs1", share: "scans", path: "alice"},
		{in: "//10.0.0.5/s/", host: "10.0.0.5", share: "s"},
		{in: "//[fe80::1]:445/s", host: "fe80::1", port: 445, share: "s"},
		{in: "fs1/scans", err: true},
		{in: "//fs1", err: true},
		{in: "///scans", err: true},
		{in: "//fs1:0/scans", err: true},
		{in: "//fs1:x/scans", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDestination(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if tc.err {
				if !strings.Contains(err.Error(), "destination") {
					t.Errorf("error %q does not name the destination", err)
				}
				return
			}
			if got.Host != tc.host || got.Port != tc.port || got.Share != tc.share || got.Path != tc.path {
				t.Errorf("got %+v", got)
			}
		})
	}
}

func TestValidateNamesField(t *testing.T) {
	good := Target{Host: "fs1", Share: "scans", User: "alice"}
	tests := []struct {
		mut   func(*Target)
		field string
	}{
		{func(t *Target) { t.Host = "" }, "host"},
		{func(t *Target) { t.Host = "a b" }, "host"},
		{func(t *Target) { t.Share = "" }, "share"},
		{func(t *Target) { t.Share = "a:b" }, "share"},
		{func(t *Target) { t.User = "  " }, "user"}, // "" is an anonymous logon
		{func(t *Target) { t.Path = "a/../b" }, "path"},
		{func(t *Target) { t.Port = 70000 }, "port"},
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		tg := good
		tc.mut(&tg)
		err := tg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.field) {
			t.Errorf("%+v: err = %v, want it to start with %q", tg, err, tc.field)
		}
	}
}

// TestDialPort: a stored port 0 means 445, which is no port to name; any
// other port is dialed and named as stored.
func TestDialPort(t *testing.T) {
	for _, tc := range []struct {
		port, dial int
		named      bool
	}{{0, 445, false}, {445, 445, false}, {139, 139, true}, {4445, 4445, true}} {
		if got := DialPort(tc.port); got != tc.dial {
			t.Errorf("DialPort(%d) = %d, want %d", tc.port, got, tc.dial)
		}
		if got := (Target{Port: tc.port}).DialPort(); got != tc.dial {
			t.Errorf("Target{Port: %d}.DialPort() = %d, want %d", tc.port, got, tc.dial)
		}
		if got := NonDefaultPort(tc.port); got != tc.named {
			t.Errorf("NonDefaultPort(%d) = %v, want %v", tc.port, got, tc.named)
		}
	}
}
