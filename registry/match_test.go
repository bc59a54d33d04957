package registry

import (
	"sort"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	ds := []Destination{
		{Name: "alice", Host: "fs01.kyolab.test", Share: "scans", Path: "alice"},
		{Name: "alice-sub", Host: "fs01.kyolab.test", Share: "Scans", Path: "alice/2025"},
		{Name: "root", Host: "fs01", Share: "scans"},
		{Name: "bob", Host: "FS02", Share: "scans", Path: "bob"},
		{Name: "ip", Host: "10.77.0.10", Share: "scans", Path: "x"},
		{Name: "twin1", Host: "nas", Share: "s", Path: "p"},
		{Name: "twin2", Host: "nas", Share: "s", Path: "p"},
	}
	for text, want := range map[string]string{
		`\\fs01.kyolab.test\scans\alice`:         "alice",
		`\\FS01\SCANS\ALICE`:                     "alice",
		`//fs01/scans/alice/2025`:                "alice-sub",
		`smb://fs01.kyolab.test/scans/alice/x/y`: "alice",
		`\\fs01\scans\carol`:                     "root",
		`fs02 \scans\bob`:                        "bob",
		`fs02.kyolab.test:\scans\bob\deep`:       "bob",
		`\\10.77.0.10\scans\x`:                   "ip",
		`\\10.77.0.1\scans\x`:                    "",
		`\\fs03\scans\alice`:                     "",
		`\\nas\s\p`:                              "twin1,twin2",
		`\\nas`:                                  "",
		`Send error 1102`:                        "",
		``:                                       "",
		`\\fs01.other.test\scans\alice`:          "root", // a bare stored name matches any full name
	} {
		var names []string
		for _, d := range Match(text, ds) {
			names = append(names, d.Name)
		}
		sort.Strings(names)
		if got := strings.Join(names, ","); got != want {
			t.Errorf("Match(%q) = %q, want %q", text, got, want)
		}
	}
}
