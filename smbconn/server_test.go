package smbconn

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/internal/ntlm"
	"github.com/scanwarden/scanwarden/internal/smbfake"
)

func TestParseWindowsChallenge(t *testing.T) {
	c, err := ntlm.ParseIdentity(smbfake.SPNEGOResp(smbfake.WindowsChallenge()))
	if err != nil {
		t.Fatal(err)
	}
	var info ServerInfo
	applyIdentity(c, &info)
	if info.NetBIOSComputer != "SCANPC" || info.NetBIOSDomain != "OFFICE" || info.DNSDomain != "office.example" ||
		info.DNSComputer != "scanpc.office.example" || info.OSVersion != "10.0.22631" || !info.ClientEdition || !strings.Contains(info.Windows, "Windows 11") {
		t.Fatalf("parsed %+v", info)
	}
}

func TestWindowsEdition(t *testing.T) {
	tests := []struct {
		build  uint16
		client bool
		name   string
	}{
		{19045, true, "Windows 10"}, {22000, true, "Windows 11"}, {22631, true, "23H2"},
		{20348, false, "Server 2022"}, {26100, false, "24H2 or Server 2025"}, {17763, false, "Server 2019"},
	}
	for _, tc := range tests {
		name, client := windowsEdition(10, 0, tc.build)
		if client != tc.client || !strings.Contains(name, tc.name) {
			t.Errorf("build %d: %q client=%v", tc.build, name, client)
		}
	}
}

func TestJudgeWindows(t *testing.T) {
	tests := []struct {
		os             string
		build          int
		client, strict bool
	}{
		{"Windows 11 Pro", 22631, true, false},
		{"Windows 11 Pro", 26100, true, true},
		{"Windows Server 2025 Standard", 26100, false, false},
		{"Samba 4.17.12-Debian", 0, false, false},
		{"", 22631, true, false},
		{"", 26200, true, true},
		{"", 26100, false, false}, // 24H2 or Server 2025: the build alone cannot tell
		{"", 20348, false, false},
	}
	for _, tc := range tests {
		w := JudgeWindows(tc.os, 10, 0, tc.build)
		if w.Client != tc.client || w.Strict != tc.strict || w.Name == "" {
			t.Errorf("%q %d: %+v", tc.os, tc.build, w)
		}
	}
}
