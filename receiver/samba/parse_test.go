package samba

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
)

// TestConfigErrorIsFieldError: a receiver setting that cannot be used is
// the one field error type, worded as before (the value quoted).
func TestConfigErrorIsFieldError(t *testing.T) {
	err := Config{Dir: "rel", Inbox: "/y", Listen: netip.MustParseAddr("127.0.0.9"), Port: 445, Share: "scans"}.Validate()
	var fe *scanwarden.FieldError
	if !errors.As(err, &fe) || fe.Field != "dir" || err.Error() != `dir "rel": must be an absolute path` {
		t.Fatalf("%T %v", err, err)
	}
}

// TestParseListenAndAllowEntry: the share's address and allowlist entries.
func TestParseListenAndAllowEntry(t *testing.T) {
	for _, c := range []struct {
		in   string
		port int
		err  string
	}{{"10.0.0.5", 445, ""}, {"10.0.0.5:4455", 4455, ""}, {"[fe80::1]:445", 445, ""}, {"fileserver:445", 0, "not an IP"},
		{"10.0.0.5:99999", 0, "bad port"}, {"", 0, "want the IP"}} {
		_, port, err := ParseListen(c.in)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) || port != c.port {
			t.Errorf("%q: %d %v", c.in, port, err)
		}
	}
	for in, want := range map[string]string{"10.0.0.5": "10.0.0.5/32", " 10.0.0.7/24 ": "10.0.0.0/24", "fe80::1%eth0": "", "mfp-floor2": "",
		"::ffff:10.0.0.9": "10.0.0.9/32", "::ffff:10.0.0.0/120": "10.0.0.0/24", "::ffff:0:0/80": "::/80", "fd00::5": "fd00::5/128"} {
		p, err := ParseAllowEntry(in)
		if want == "" && err == nil || want != "" && (err != nil || p.String() != want) {
			t.Errorf("%q: %v %v", in, p, err)
		}
	}
}
