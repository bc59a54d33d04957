package ad

import (
	"strings"
	"testing"

	"github.com/go-ldap/ldap/v3"
)

func TestOSBuild(t *testing.T) {
	tests := map[string]int{
		"10.0 (26100)": 26100, "10.0 (22631)": 22631, "10.0 (19045.4412)": 19045,
		"6.3 (9600)": 9600, "4.17.12-Debian": 0, "": 0, "10.0 ()": 0, "10.0 (x)": 0,
	}
	for in, want := range tests {
		if got := osBuild(in); got != want {
			t.Errorf("osBuild(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestOSWarnings(t *testing.T) {
	tests := []struct {
		os     string
		build  int
		client bool
		want   []string // one substring per warning
	}{
		{"Windows 11 Pro", 26100, true, []string{"20 inbound SMB sessions", "24H2 or later (build 26100): SMB signing is required and guest logons are off"}},
		{"Windows 11 Enterprise", 26200, true, []string{"AutoDisconnect", "signing"}},
		{"Windows 11 Pro", 22631, true, []string{"client edition"}},
		{"Windows 11 Pro", 0, true, []string{"client edition", "unknown build"}},
		{"Windows 10 Pro", 19045, true, []string{"at most 20 inbound"}},
		{"Windows Server 2025 Standard", 26100, false, nil},
		{"Windows Server 2019 Datacenter", 17763, false, nil},
		{"Samba", 0, false, nil},
		{"", 0, false, nil},
	}
	for _, tc := range tests {
		client, ws := osWarnings("SCANPC", tc.os, tc.build)
		if client != tc.client || len(ws) != len(tc.want) {
			t.Errorf("%s %d: client %v, warnings %q", tc.os, tc.build, client, ws)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(ws[i], w) || !strings.Contains(ws[i], "SCANPC") {
				t.Errorf("%s: warning %q lacks %q", tc.os, ws[i], w)
			}
		}
	}
}

func TestComputerFilter(t *testing.T) {
	tests := map[string]string{
		"pc7.kyolab.test": "(&(objectClass=computer)(|(dNSHostName=pc7.kyolab.test)(cn=pc7)(sAMAccountName=pc7$)))",
		"SCANPC":          "(&(objectClass=computer)(|(dNSHostName=SCANPC)(cn=SCANPC)(sAMAccountName=SCANPC$)))",
		"*)(cn=*":         `(&(objectClass=computer)(|(dNSHostName=\2a\29\28cn=\2a)(cn=\2a\29\28cn=\2a)(sAMAccountName=\2a\29\28cn=\2a$)))`,
	}
	for in, want := range tests {
		got := computerFilter([]string{in})
		if got != want {
			t.Errorf("computerFilter(%q) = %s, want %s", in, got, want)
		}
		if _, err := ldap.CompileFilter(got); err != nil {
			t.Errorf("%s: %v", got, err)
		}
	}
}

func TestComputerFill(t *testing.T) {
	a := ldap.NewEntry("CN=PC7,CN=Computers,DC=kyolab,DC=test", map[string][]string{"sAMAccountName": {"PC7$"}, "dNSHostName": {"pc7.other.test"}})
	b := ldap.NewEntry("CN=PC7,OU=Scan,DC=kyolab,DC=test", map[string][]string{"sAMAccountName": {"PC7$"}, "dNSHostName": {"pc7.kyolab.test"},
		"operatingSystem": {"Windows 11 Pro"}, "operatingSystemVersion": {"10.0 (26100)"}})
	e := pickComputer([]*ldap.Entry{a, b}, []string{"PC7.kyolab.test"})
	if e != b {
		t.Fatalf("picked %s", e.DN)
	}
	c := &Computer{Name: "pc7.kyolab.test", Evidence: map[string]any{}}
	c.fill(e)
	if !c.Found || !c.ClientEdition || c.Build != 26100 || len(c.Warnings) != 2 || c.hostName() != "pc7.kyolab.test" ||
		c.Summary != "pc7.kyolab.test runs Windows 11 Pro 10.0 (26100)" || c.Evidence["operatingSystem"] != "Windows 11 Pro" {
		t.Errorf("%+v", c)
	}
}
