package smbcheck

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
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
	tg := scanwarden.Target{Host: "127.0.0.1", Port: 1, Share: "scans", User: "alice", Auth: scanwarden.AuthKerberos}
	for _, c := range []struct {
		d     Device
		field string
	}{
		{Device{NoKerberos: true}, "device_no_kerberos"},
		{Device{MinDialect: DialectSMB30, MaxDialect: DialectSMB21}, "device_min_dialect"},
	} {
		r := Run(context.Background(), tg, Options{Device: c.d})
		if len(r.Steps) != 1 || r.Steps[0].ID != "target" || r.Steps[0].Evidence["field"] != c.field || r.Verdict.Cause != scanwarden.CauseUnknown {
			t.Errorf("%+v: %s", c.d, stepsString(r))
		}
		if !strings.Contains(r.Verdict.Fix, "device's SMB profile") {
			t.Errorf("fix %q", r.Verdict.Fix)
		}
	}
}

// Every report says whose client it replayed: the device's profile (what
// the replay did, each value's origin as the caller gave it) or
// scanwarden's own; a report read from before says nothing.
func TestReportSaysWhoseClient(t *testing.T) {
	tg := scanwarden.Target{Host: "127.0.0.1", Port: 1, Share: "scans", User: "u"}
	src := &Profile{Device: "mfp01", Values: []ProfileSource{{Field: "max_dialect", Value: "2.1", Origin: "seen"}}}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Device: Device{MaxDialect: DialectSMB21, NoEncryption: true, FileType: FileTypePDF}, Profile: src}, "device mfp01's profile: SMB 2.1 at most, no encryption, writes pdf"},
		{Options{Device: Device{NTLMv1: true}}, "a device profile: SMB1 only, NTLMv1"},
		{Options{Profile: src}, "scanwarden's own client (device mfp01: no profile known)"},
		{Options{}, "scanwarden's own client (no device profile)"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := Run(ctx, tg, c.o)
		if got := r.Replayed(); got != c.want {
			t.Errorf("%+v: replayed %q, want %q", c.o.Device, got, c.want)
		}
		if c.o.Device.Known() && c.o.Profile != nil && (len(r.Profile.Values) != 1 || r.Profile.Values[0].Origin != "seen") {
			t.Errorf("sources %+v", r.Profile)
		}
	}
	var old Report
	if err := json.Unmarshal([]byte(`{"verdict":{"cause":"ok"}}`), &old); err != nil || old.Replayed() != "" {
		t.Errorf("a report from before: %q, %v", old.Replayed(), err)
	}
}
