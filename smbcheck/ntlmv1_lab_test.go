package smbcheck

// An MFP that logs on with NTLMv1 over SMB2/3 (a profile with NTLM v1 and
// an SMB2 dialect): smb2srv accepts only NTLMv2 (Samba's default), smb2v1
// (smb2srv's address, port 2445) permits NTLMv1, requires signing and
// writes Samba's auth audit (passwordType) to its log.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestLabNTLMv1OverSMB2(t *testing.T) {
	lab := testlab.Require(t)
	v1 := func(d Dialect) Options { return Options{Device: Device{NTLMv1: true, MaxDialect: d}} }
	overSMB2 := func(d Dialect) func(t *testing.T, r Report) {
		return func(t *testing.T, r Report) {
			t.Helper()
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["dialect"] != d.String() {
				t.Errorf("negotiated %v, want %s", s.Evidence["dialect"], d)
			}
			if s := r.Step(StepSession); s == nil || s.Evidence["protocol"] != "SMB "+d.String()+", NTLMv1" {
				t.Errorf("session not replayed with NTLMv1 over SMB %s:%s", d, stepsString(r))
			}
		}
	}
	signed := "//" + lab.SMB2IP + ":2445/scans"
	// Workstation names of this run alone: the audit log keeps earlier runs'.
	tag := fmt.Sprintf("%07d", time.Now().UnixNano()/1e6%1e7)
	for _, c := range []labCase{
		{name: "refused-by-ntlmv2-only-3.1.1", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", opts: v1(DialectSMB311), want: scanwarden.CauseNTLMv1Refused, check: func(t *testing.T, r Report) {
			overSMB2(DialectSMB311)(t, r)
			s := stepIs(t, r, StepSession, StatusFail)
			if s.Evidence["ntlmv2"] != "accepted" || s.Evidence["ntlmv1"] != ntstatus.LogonFailure.String() {
				t.Errorf("session evidence %v", s.Evidence)
			}
			if r.Verdict.KyoceraCode != "1102" || !strings.Contains(r.Verdict.Fix, "SMB Client") || !strings.Contains(r.Verdict.Fix, "ntlm auth = ntlmv1-permitted") {
				t.Errorf("verdict %+v", r.Verdict)
			}
			stepIs(t, r, StepForms, StatusSkipped)
		}},
		// A domain account: the DC checks the password, and dc1 keeps
		// Samba's default ntlmv2-only (bob's badPwdCount reads 0 after
		// this case: the NTLMv2 logon that follows succeeds).
		{name: "refused-by-dc-domain-account", dest: "//" + lab.DCHost + "/scans", user: "bob", opts: v1(DialectSMB311), want: scanwarden.CauseNTLMv1Refused, check: func(t *testing.T, r Report) {
			overSMB2(DialectSMB311)(t, r)
			if s := stepIs(t, r, StepSession, StatusFail); s.Evidence["ntlmv2"] != "accepted" {
				t.Errorf("session evidence %v", s.Evidence)
			}
		}},
		{name: "refused-by-ntlmv2-only-2.1", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", opts: v1(DialectSMB21), want: scanwarden.CauseNTLMv1Refused, check: overSMB2(DialectSMB21)},
		{name: "permitted-signed-2.1", dest: signed, user: "scanuser", ws: "V1A" + tag, opts: v1(DialectSMB21), want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			overSMB2(DialectSMB21)(t, r)
			if s := stepIs(t, r, StepNegotiate, StatusOK); s.Evidence["signing_required"] != true {
				t.Errorf("negotiate evidence %v", s.Evidence)
			}
			stepIs(t, r, StepWrite, StatusOK)
			auditSays(t, lab, "smb2v1", "V1A"+tag, "NTLMv1")
		}},
		{name: "permitted-signed-3.1.1", dest: signed, user: "scanuser", ws: "V1B" + tag, opts: v1(DialectSMB311), want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			overSMB2(DialectSMB311)(t, r)
			stepIs(t, r, StepWrite, StatusOK)
			auditSays(t, lab, "smb2v1", "V1B"+tag, "NTLMv1")
		}},
		{name: "permitted-signed-3.0", dest: signed, user: "scanuser", ws: "V1C" + tag, opts: v1(DialectSMB30), want: scanwarden.CauseOK, check: overSMB2(DialectSMB30)},
		// The audit tells the two apart: a device without NTLMv1 sends NTLMv2.
		{name: "ntlmv2-device-audited-as-ntlmv2", dest: signed, user: "scanuser", ws: "V2A" + tag, opts: Options{Device: Device{MaxDialect: DialectSMB311}}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			auditSays(t, lab, "smb2v1", "V2A"+tag, "NTLMv2")
		}},
		{name: "permitted-wrong-password", dest: signed, user: "scanuser", pw: wrongPassword, opts: v1(DialectSMB311), want: scanwarden.CauseBadCredentials, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepSession, StatusFail); s.Evidence["ntlmv2"] != ntstatus.LogonFailure.String() {
				t.Errorf("session evidence %v", s.Evidence)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { runLab(t, lab, c) })
	}
}

// TestLabNTLMv1RefusedBudget: naming NTLMv1 refused over SMB2 costs the
// failure ledger what the SMB1 replay's naming costs: one failed logon
// (the NTLMv1 one) and one NTLMv2 logon that succeeds.
func TestLabNTLMv1RefusedBudget(t *testing.T) {
	lab := testlab.Require(t)
	for _, c := range []struct {
		name, dest string
		dev        Device
		want       scanwarden.Cause
	}{
		{"smb1", "//" + lab.SMB1IP + "/scans", Device{NTLMv1: true}, scanwarden.CauseSMB1Refused},
		{"smb2", "//" + lab.SMB2IP + "/scans", Device{NTLMv1: true, MaxDialect: DialectSMB311}, scanwarden.CauseNTLMv1Refused},
	} {
		t.Run(c.name, func(t *testing.T) {
			led := &outcomeLedger{Ledger: &smbclient.MemoryLedger{}}
			o := Options{Device: c.dev, Ledger: led, MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second}
			r := Run(context.Background(), labTarget(t, lab, c.dest, "scanuser", ""), o)
			if r.Verdict.Cause != c.want {
				t.Fatalf("verdict %s, want %s%s", r.Verdict.Cause, c.want, stepsString(r))
			}
			failed := 0
			for _, k := range led.got {
				if k == smbclient.Failed {
					failed++
				}
			}
			if led.sent != 2 || failed != 1 {
				t.Errorf("%d logons sent, %d failed (%v); want 2 and 1", led.sent, failed, led.got)
			}
		})
	}
}

// auditSays finds, in the named standalone server's smbd log, Samba's auth
// audit of a logon from workstation ws with passwordType want.
func auditSays(t *testing.T, lab *testlab.Lab, server, ws, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(lab.Dir, server, "log", "smbd.log"))
	if err != nil {
		t.Fatalf("%s's auth audit: %v", server, err)
	}
	var seen []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.Contains(line, `"passwordType"`) || !strings.Contains(strings.ToUpper(line), fmt.Sprintf(`"WORKSTATION": "%s"`, ws)) {
			continue
		}
		if strings.Contains(line, fmt.Sprintf(`"passwordType": "%s"`, want)) {
			return
		}
		seen = append(seen, line)
	}
	t.Errorf("%s's auth audit has no %s logon from %s (other audit lines from it: %q)", server, want, ws, seen)
}
