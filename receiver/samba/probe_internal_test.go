package samba

import (
	"errors"
	"net/netip"
	"testing"
)

// Only smbd's refusal of the probe's own address makes box-not-admitted:
// another client refused by hosts allow while the probe failed for its own
// reason (its line lands in the same stretch of smbd's log) is not it.
func TestProbeRefusedOnlyForItsOwnAddress(t *testing.T) {
	p := ShareProbe{Listen: netip.MustParseAddr("10.1.2.3"), Port: 445, Share: "scans", Inbox: "/nonexistent"}
	cut := errors.New("read tcp 10.1.2.3:51234->10.1.2.3:445: read: connection reset by peer")
	other := logLines{"[2026/12/02 07:00:01.5, 0] ../../source3/lib/access.c:338(check_access)", "Denied connection from 10.9.9.9 (10.9.9.9)"}
	if h := p.refused(cut, other, "10.1.2.3:445", `\\10.1.2.3\scans`); h.Cause == ShareNotAdmitted {
		t.Fatalf("another host's refusal read as the probe's: %+v", h)
	}
	own := append(other, "Denied connection from 10.1.2.3 (10.1.2.3)")
	if h := p.refused(cut, own, "10.1.2.3:445", `\\10.1.2.3\scans`); h.Cause != ShareNotAdmitted || h.SmbdLog != "Denied connection from 10.1.2.3 (10.1.2.3)" {
		t.Fatalf("the probe's own refusal: %+v", h)
	}
}
