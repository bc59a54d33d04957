package smbcheck

import (
	"context"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/smbconn"
)

// The write step's test file takes every file type's extension, and the
// journal sweeps only those.
func TestCanaryFileTypes(t *testing.T) {
	for _, ft := range smbconn.FileTypes() {
		if n := "scanwarden-check-20261206T060000Z-0123456789ab" + ft.Ext(); !isCanaryName(n) {
			t.Errorf("%s is not taken for a canary", n)
		}
	}
	if isCanaryName("scanwarden-check-x.docx") {
		t.Error("a .docx taken for a canary")
	}
}

// A device the check cannot replay ends the check before anything is sent,
// naming the field — never an "ok" for what the MFP cannot do.
func TestRunRefusesDeviceItCannotReplay(t *testing.T) {
	tg := Target{Host: "127.0.0.1", Port: 1, Share: "scans", User: "alice", Auth: AuthKerberos}
	for _, c := range []struct {
		d     Device
		field string
	}{
		{Device{NoKerberos: true}, "device_no_kerberos"},
		{Device{MinDialect: DialectSMB30, MaxDialect: DialectSMB21}, "device_min_dialect"},
	} {
		r := Run(context.Background(), tg, Options{Device: c.d})
		if len(r.Steps) != 1 || r.Steps[0].ID != "target" || r.Steps[0].Evidence["field"] != c.field || r.Verdict.Cause != CauseUnknown {
			t.Errorf("%+v: %s", c.d, stepsString(r))
		}
		if !strings.Contains(r.Verdict.Fix, "device's SMB profile") {
			t.Errorf("fix %q", r.Verdict.Fix)
		}
	}
}
