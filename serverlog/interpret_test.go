package serverlog

import (
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/msrpc"
)

func TestInterpret(t *testing.T) {
	at := time.Unix(1764990000, 0).UTC()
	q := Query{Account: "scanuser", Workstation: "MFP01"}
	rec := func(id uint32, strs ...string) msrpc.Record {
		return msrpc.Record{Number: 9, Generated: at, EventID: id, Type: msrpc.TypeAuditFailure, Strings: strs}
	}
	tests := []struct {
		name string
		log  string
		r    msrpc.Record
		keep bool
		want string
	}{
		{"4776 of the account", "Security", rec(4776, "MICROSOFT_AUTHENTICATION_PACKAGE_V1_0", "ScanUser", "MFP01", "0xc0000234"), true,
			"4776: the credentials of ScanUser from MFP01 were checked: 0xC0000234 STATUS_ACCOUNT_LOCKED_OUT"},
		{"4740 by the MFP", "Security", rec(4740, "scanuser", "MFP01", "S-1-5-21-1"), true, "4740: scanuser was locked out by the logons from MFP01"},
		{"4740 of another account from the MFP", "Security", rec(4740, "bob", "MFP01"), true, "4740: bob was locked out"},
		{"4625 of another account elsewhere", "Security", rec(4625, "S-1-0-0", "-", "-", "0x0", "S-1-0-0", "bob", "KYOLAB", "0xc000006d", "%%2313", "0xc000006a", "3", "NtLmSsp", "NTLM", "PC17"), false, ""},
		{"4625 by UPN", "Security", rec(4625, "S-1-0-0", "-", "-", "0x0", "S-1-0-0", "scanuser@kyolab.test", "", "0xc000006e", "%%2312", "0xc0000070"), true,
			"4625: scanuser@kyolab.test failed to log on: the user is not allowed to log on from this computer; status 0xC000006E"},
		{"4625 cut short", "Security", rec(4625, "S-1-0-0", "-", "-", "0x0", "S-1-0-0", "scanuser"), true, "4625: scanuser failed to log on"},
		{"4624 not kept", "Security", rec(4624, "scanuser"), false, ""},
		{"2017", "System", rec(2017), true, "2017: the server was unable to allocate from the system nonpaged pool"},
		{"7036 not kept", "System", rec(7036, "x"), false, ""},
		{"control characters", "Security", rec(4740, "scanuser", "MFP\x1b[2J01"), true, "by the logons from MFP [2J01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, ok := interpret(tc.log, tc.r, q)
			if ok != tc.keep {
				t.Fatalf("kept %v, want %v (%s)", ok, tc.keep, ev.Text)
			}
			if ok && !strings.Contains(ev.Text, tc.want) {
				t.Errorf("text %q, want %q", ev.Text, tc.want)
			}
		})
	}
}

func TestLines(t *testing.T) {
	var none *Story
	if none.Lines() != nil {
		t.Error("nil story has lines")
	}
	s := &Story{Logs: []string{"Security", "System"}, Share: &ShareUses{Share: "scans", Current: 3}}
	got := strings.Join(s.Lines(), "|")
	if got != "share scans: 3 connections in use (no limit set)|the Security and System logs hold nothing about this failure" {
		t.Errorf("lines %q", got)
	}
}
