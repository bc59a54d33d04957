package smbcheck

// A server that requires SMB3 encryption server-wide: smb2enc (smb2srv's
// address, port 6445, server smb encrypt = required in [global]) refuses
// the session setup itself to a client that cannot encrypt.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabEncryptionServerWide(t *testing.T) {
	lab := testlab.Require(t)
	dest := "//" + lab.SMB2IP + ":6445/scans"
	smb21 := Device{MaxDialect: DialectSMB21, NoEncryption: true}
	required := func(t *testing.T, r Report) {
		t.Helper()
		if r.Verdict.KyoceraCode != "1102" || r.Canary != "" {
			t.Errorf("verdict %+v, canary %q", r.Verdict, r.Canary)
		}
		for _, s := range r.Steps {
			if s.Status != StatusFail {
				continue
			}
			if ev, _ := s.Evidence["encryption"].(string); !strings.Contains(ev, "required") || s.Evidence["device_encrypts"] != false {
				t.Errorf("step %s evidence %v", s.ID, s.Evidence)
			}
			return
		}
		t.Errorf("no failed step: %+v", r.Steps)
	}
	for _, c := range []labCase{
		// Refused at the session setup: the session step names it.
		{name: "smb21-no-encryption", dest: dest, user: "scanuser", opts: Options{Device: smb21}, want: scanwarden.CauseEncryptionRequired, check: func(t *testing.T, r Report) {
			required(t, r)
			if s := stepIs(t, r, StepSession, StatusFail); !strings.Contains(s.Evidence["encryption"].(string), "every session") {
				t.Errorf("session evidence %v", s.Evidence)
			}
			stepIs(t, r, StepForms, StatusSkipped)
		}},
		// A wrong password is refused as such (LOGON_FAILURE), before the
		// server looks at encryption.
		{name: "smb21-wrong-password", dest: dest, user: "scanuser", pw: wrongPassword, opts: Options{Device: smb21}, want: scanwarden.CauseBadCredentials},
		// Refused at the session setup of the 3.0.2 client that asks in
		// its place (tree.go, encryptionAsked).
		{name: "smb311-no-encryption", dest: dest, user: "scanuser", opts: Options{Device: Device{MaxDialect: DialectSMB311, NoEncryption: true}}, want: scanwarden.CauseEncryptionRequired, check: func(t *testing.T, r Report) {
			required(t, r)
			if ev, _ := stepIs(t, r, StepTree, StatusFail).Evidence["encryption"].(string); !strings.Contains(ev, "is refused") || strings.Contains(ev, "judged") {
				t.Errorf("tree evidence %q", ev)
			}
		}},
		{name: "own-client-ok", dest: dest, user: "scanuser", want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepWrite, StatusOK)
		}},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
	// The refusal spends none of the failed-logon budget: the same check
	// runs again at once, with the same ledger, and says the same.
	led := &smbclient.MemoryLedger{}
	o := Options{Device: smb21, Ledger: led, MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second}
	for i := range 2 {
		if r := Run(context.Background(), labTarget(t, lab, dest, "scanuser", ""), o); r.Verdict.Cause != scanwarden.CauseEncryptionRequired {
			t.Errorf("run %d with one ledger: verdict %s (%s)", i+1, r.Verdict.Cause, r.Verdict.Summary)
		}
	}
}
