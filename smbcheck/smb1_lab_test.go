package smbcheck

// The SMB1 replay against the lab's SMB1-only Samba (smb1srv: shares
// scans, restricted, scans-ro, nodelete; folder scans/readonly).

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabSMB1Replay(t *testing.T) {
	lab := testlab.Require(t)
	smb1 := Options{MaxFailures: DefaultMaxFailures, Device: Device{SMB1Only: true}}
	v1 := Options{MaxFailures: DefaultMaxFailures, Device: Device{NTLMv1: true}}
	base := "//" + lab.SMB1IP
	replayed := func(t *testing.T, r Report) {
		t.Helper()
		s := r.Step(StepSession)
		if s == nil || !strings.HasPrefix(toString(s.Evidence["protocol"]), "SMB1") {
			t.Errorf("session not replayed over SMB1:%s", stepsString(r))
		}
	}
	for _, c := range []labCase{
		{name: "ok", dest: base + "/scans", user: "scanuser", opts: smb1, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			replayed(t, r)
			w := stepIs(t, r, StepWrite, StatusOK)
			if _, ok := w.Evidence["free_bytes"].(uint64); !ok {
				t.Errorf("no free space over SMB1: %v", w.Evidence)
			}
		}},
		{name: "ok, signing required (smb1sign)", dest: base + ":1445/scans", user: "scanuser", opts: smb1, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			replayed(t, r)
			if s := r.Step(StepNegotiate); s.Evidence["signing_required"] != true {
				t.Errorf("negotiate evidence %v", s.Evidence)
			}
			stepIs(t, r, StepWrite, StatusOK)
		}},
		{name: "NTLMv1 refused by an NTLMv2-only server", dest: base + "/scans", user: "scanuser", opts: v1, want: scanwarden.CauseSMB1Refused, check: func(t *testing.T, r Report) {
			replayed(t, r)
			s := stepIs(t, r, StepSession, StatusFail)
			if s.Evidence["ntlmv2"] != "accepted" || s.Evidence["ntlmv1"] != ntstatus.LogonFailure.String() || !strings.Contains(r.Verdict.Fix, "NTLMv2") {
				t.Errorf("session evidence %v, fix %q", s.Evidence, r.Verdict.Fix)
			}
		}},
		{name: "NTLMv1 accepted (smb1v1)", dest: base + ":2445/scans", user: "scanuser", opts: v1, want: scanwarden.CauseOK, check: replayed},
		{name: "NTLMv1, wrong password (smb1v1)", dest: base + ":2445/scans", user: "scanuser", pw: wrongPassword, opts: v1, want: scanwarden.CauseBadCredentials, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepSession, StatusFail); s.Evidence["ntlmv2"] != ntstatus.LogonFailure.String() {
				t.Errorf("session evidence %v", s.Evidence)
			}
		}},
		{name: "ok port 139", dest: "//smb1srv." + lab.DNSDomain + ":139/scans", user: "scanuser", opts: smb1, want: scanwarden.CauseOK, check: replayed},
		{name: "bad-credentials", dest: base + "/scans", user: "scanuser", pw: wrongPassword, opts: smb1, want: scanwarden.CauseBadCredentials, check: func(t *testing.T, r Report) {
			replayed(t, r)
			if s := stepIs(t, r, StepSession, StatusFail); s.Evidence["nt_status"] != ntstatus.LogonFailure.String() {
				t.Errorf("session evidence %v", s.Evidence)
			}
		}},
		{name: "share-not-found", dest: base + "/nosuchshare", user: "scanuser", opts: smb1, want: scanwarden.CauseShareNotFound},
		{name: "share-access-denied", dest: base + "/restricted", user: "scanuser", opts: smb1, want: scanwarden.CauseShareAccessDenied},
		{name: "path-not-found", dest: base + "/scans/no/such", user: "scanuser", opts: smb1, want: scanwarden.CausePathNotFound, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepPath, StatusFail); s.Evidence["missing"] != "no" {
				t.Errorf("path evidence %v", s.Evidence)
			}
		}},
		{name: "folder mode 0555", dest: base + "/scans/readonly", user: "scanuser", opts: smb1, want: scanwarden.CauseNoWritePermission},
		{name: "read-only share", dest: base + "/scans-ro", user: "scanuser", opts: smb1, want: scanwarden.CauseNoWritePermission},
		{name: "no-delete-permission", dest: base + "/nodelete", user: "scanuser", opts: smb1, want: scanwarden.CauseNoDeletePermission, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepWrite, StatusFail); s.Evidence["nt_status"] != ntstatus.CannotDelete.String() {
				t.Errorf("write evidence %v", s.Evidence)
			}
		}},
		// Not flagged SMB1-only: the server's SMB1 is the finding, the
		// replay over SMB1 says what an MFP with SMB1 enabled meets.
		{name: "smb1-only-server works over SMB1", dest: base + "/scans", user: "scanuser", want: scanwarden.CauseSMB1OnlyServer, check: func(t *testing.T, r Report) {
			replayed(t, r)
			stepIs(t, r, StepWrite, StatusOK)
			if len(r.Verdict.Also) != 0 || !strings.Contains(r.Verdict.Summary, "over SMB1") {
				t.Errorf("verdict %+v", r.Verdict)
			}
		}},
		{name: "smb1-only-server and a wrong password", dest: base + "/scans", user: "scanuser", pw: wrongPassword, want: scanwarden.CauseSMB1OnlyServer, check: func(t *testing.T, r Report) {
			replayed(t, r)
			if !containsCause(r.Verdict.Also, scanwarden.CauseBadCredentials) {
				t.Errorf("also %v, want bad-credentials", r.Verdict.Also)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}

// TestLabSMB1Ledger: the gate holds over SMB1 as over SMB2.
func TestLabSMB1Ledger(t *testing.T) {
	lab := testlab.Require(t)
	dest := "//" + lab.SMB1IP + "/scans"
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	o := Options{Device: Device{SMB1Only: true}, Ledger: led, MaxFailures: -1, StepTimeout: 5 * time.Second}
	r := Run(context.Background(), labTarget(t, lab, dest, "scanuser", ""), o)
	if led.sent != 0 || r.Verdict.Cause == scanwarden.CauseOK {
		t.Fatalf("budget 0: %d logons sent, verdict %s", led.sent, r.Verdict.Cause)
	}
	o.MaxFailures = 1
	r = Run(context.Background(), labTarget(t, lab, dest, "scanuser", wrongPassword), o)
	if led.sent != 1 || r.Verdict.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("budget 1, wrong password: %d sent, verdict %s%s", led.sent, r.Verdict.Cause, stepsString(r))
	}
	r = Run(context.Background(), labTarget(t, lab, dest, "scanuser", wrongPassword), o)
	if led.sent != 1 || r.Verdict.Cause != scanwarden.CauseBadCredentials || !r.Verdict.FromLedger {
		t.Fatalf("again: %d sent, verdict %s from ledger %v", led.sent, r.Verdict.Cause, r.Verdict.FromLedger)
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}
