package ad

// AD in the diagnosis: smbcheck.Run with the lab's directory, on the lab's
// SMB peers. Proves that predicted failures replay no logon, that the failure
// budget follows the real badPwdCount, that user name forms come from AD, that
// a dead DC does not stop a check, and that the folder's ACL is judged and
// compared with the canary.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

// sentLedger counts the logons a check actually sent.
type sentLedger struct {
	smbclient.MemoryLedger
	mu   sync.Mutex
	sent int
}

func (l *sentLedger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	id, r, err := l.MemoryLedger.Reserve(ctx, a, since, budget)
	if id != 0 {
		l.mu.Lock()
		l.sent++
		l.mu.Unlock()
	}
	return id, r, err
}

func diagnose(t *testing.T, lab *testlab.Lab, dir smbcheck.Directory, dest, user, pw, ws string, led smbclient.Ledger, noWrite bool) smbcheck.Report {
	t.Helper()
	tg, err := scanwarden.ParseDestination(dest)
	if err != nil {
		t.Fatal(err)
	}
	if pw == "" {
		pw = lab.Password
	}
	tg.User, tg.Password, tg.Workstation = user, scanwarden.NewSecret(pw), ws
	return smbcheck.Run(context.Background(), tg, smbcheck.Options{MaxFailures: smbcheck.DefaultMaxFailures, Directory: dir, Ledger: led, NoWrite: noWrite, StepTimeout: 10 * time.Second})
}

func reportString(r smbcheck.Report) string {
	var b strings.Builder
	for _, s := range r.Steps {
		b.WriteString("\n  " + s.ID + " " + string(s.Status) + " [" + string(s.Cause) + "] " + s.Detail + " " + smbcheck.FormatEvidence(s.Evidence))
	}
	return b.String()
}

func TestLabDiagnosisPredictsWithoutReplay(t *testing.T) {
	lab := testlab.Require(t)
	dir := labDir(t, lab, nil)
	dest := "//" + lab.DCHost + "/scans"
	tests := []struct {
		user, ws string
		want     scanwarden.Cause
		fixHas   string
	}{
		{user: "dave", want: scanwarden.CauseAccountDisabled},
		{user: "erin", want: scanwarden.CauseAccountLocked, fixHas: "unlock"},
		{user: "frank", want: scanwarden.CausePasswordMustChange},
		{user: "grace", want: scanwarden.CausePasswordExpired},
		{user: "heidi", want: scanwarden.CauseAccountExpired},
		{user: "judy", want: scanwarden.CauseLogonHours},
		{user: "smartcard", want: scanwarden.CauseSmartcardRequired, fixHas: "smart card"},
		{user: "ivan", want: scanwarden.CauseWorkstationRestricted, fixHas: "MFP01"},
		{user: "nobody.here", want: scanwarden.CauseUnknownUser},
		{user: `*)(cn=*`, want: scanwarden.CauseUnknownUser},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			if tc.user == "erin" {
				lab.LockErin(t)
			}
			led := &sentLedger{}
			r := diagnose(t, lab, dir, dest, tc.user, "", tc.ws, led, false)
			if r.Verdict.Cause != tc.want {
				t.Fatalf("verdict %s, want %s%s", r.Verdict.Cause, tc.want, reportString(r))
			}
			if led.sent != 0 {
				t.Errorf("%d logons sent for a predicted failure", led.sent)
			}
			if s := r.Step(smbcheck.StepAD); s == nil || s.Status != smbcheck.StatusFail {
				t.Errorf("ad step: %+v", s)
			}
			if s := r.Step(smbcheck.StepSession); s == nil || s.Status != smbcheck.StatusSkipped {
				t.Errorf("session step not skipped: %+v", s)
			}
			if tc.fixHas != "" && !strings.Contains(r.Verdict.Fix+r.Verdict.Summary, tc.fixHas) {
				t.Errorf("verdict does not mention %q: %+v", tc.fixHas, r.Verdict)
			}
		})
	}
	t.Run("ivan-from-MFP01", func(t *testing.T) {
		r := diagnose(t, lab, dir, dest, "ivan", "", "MFP01", &sentLedger{}, true)
		if !r.OK() {
			t.Fatalf("verdict %s%s", r.Verdict.Cause, reportString(r))
		}
	})
}

func TestLabDiagnosisFormsFromAD(t *testing.T) {
	lab := testlab.Require(t)
	led := &sentLedger{}
	r := diagnose(t, lab, labDir(t, lab, nil), "//"+lab.DCHost+"/scans", "john.doe", "", "", led, true)
	if r.Verdict.Cause != scanwarden.CauseWrongUserFormat || r.WorkingForm == nil || r.WorkingForm.Typed != "john.doe@"+lab.DNSDomain {
		t.Fatalf("verdict %s, form %+v%s", r.Verdict.Cause, r.WorkingForm, reportString(r))
	}
	if led.sent != 2 {
		t.Errorf("sent %d logons, want 2 (the stored form, then AD's UPN)", led.sent)
	}
}

// TestLabDiagnosisBudgetFollowsAD: checks that each start with a fresh
// ledger (other machines, a lost state dir) still never lock the account:
// the budget comes from its real badPwdCount, and once that is at the
// threshold minus the margin, nothing more is sent.
func TestLabDiagnosisBudgetFollowsAD(t *testing.T) {
	lab := testlab.Require(t)
	dir := labDir(t, lab, nil)
	dest := "//" + lab.DCHost + "/scans"
	const wrong = "Not-The-Password-7"
	goodLogon(t, lab, "badpw5") // start from 0 bad passwords
	defer goodLogon(t, lab, "badpw5")
	total := 0
	var last *sentLedger
	for i := range 6 {
		last = &sentLedger{}
		r := diagnose(t, lab, dir, dest, "badpw5", wrong, "", last, true)
		if r.Verdict.Cause != scanwarden.CauseBadCredentials && r.Verdict.Cause != scanwarden.CauseUnknown {
			t.Fatalf("check %d: %s%s", i+1, r.Verdict.Cause, reportString(r))
		}
		total += last.sent
	}
	if last.sent != 0 || total == 0 {
		t.Fatalf("the last check sent %d logons (%d in all): AD's budget did not stop it", last.sent, total)
	}
	u, err := dir.User(context.Background(), "badpw5", "")
	if err != nil {
		t.Fatal(err)
	}
	if u.Cause == scanwarden.CauseAccountLocked || u.BadPwdCount >= u.LockoutThreshold {
		t.Fatalf("badpw5 after 6 checks: %s, %d bad passwords of %d", u.Cause, u.BadPwdCount, u.LockoutThreshold)
	}
	if u.Budget != 0 {
		t.Errorf("budget %d with %d bad passwords, want 0", u.Budget, u.BadPwdCount)
	}
}

// goodLogon logs on over SMB with the right password, which resets the
// account's bad-password count.
func goodLogon(t *testing.T, lab *testlab.Lab, user string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: user, Password: lab.Password, Domain: lab.Domain}}).Dial(ctx, lab.DCIP+":445")
	if err != nil {
		t.Fatalf("%s cannot log on: %v", user, err)
	}
	s.Logoff()
}

func TestLabDiagnosisDCDown(t *testing.T) {
	lab := testlab.Require(t)
	dead := labDir(t, lab, func(c *Config) { c.URL = "ldaps://" + lab.GhostIP; c.Timeout = 2 * time.Second })
	r := diagnose(t, lab, dead, "//"+lab.DCHost+"/scans", "alice", "", "", &sentLedger{}, false)
	if !r.OK() {
		t.Fatalf("a dead DC stopped the check: %s%s", r.Verdict.Cause, reportString(r))
	}
	if s := r.Step(smbcheck.StepAD); s == nil || s.Status != smbcheck.StatusWarn || !strings.Contains(s.Detail, "could not be asked") {
		t.Errorf("ad step: %+v", s)
	}
}

func TestLabDiagnosisACL(t *testing.T) {
	lab := testlab.Require(t)
	dir := labDir(t, lab, nil)
	dc := "//" + lab.DCHost
	tests := []struct {
		name, dest string
		noWrite    bool
		want       scanwarden.Cause
		acl        smbcheck.Status
		fixHas     string
	}{
		{name: "writable", dest: dc + "/scans", want: scanwarden.CauseOK, acl: smbcheck.StatusOK},
		{name: "nodelete agrees", dest: dc + "/scans/nodelete", want: scanwarden.CauseNoDeletePermission, acl: smbcheck.StatusOK, fixHas: "DELETE"},
		{name: "deny ACE agrees", dest: dc + "/scans/denied", want: scanwarden.CauseNoWritePermission, acl: smbcheck.StatusOK, fixHas: "DENY"},
		{name: "finance by ACL alone", dest: dc + "/scans/finance", noWrite: true, want: scanwarden.CauseNoWritePermission, acl: smbcheck.StatusFail},
		{name: "read-only share disagrees", dest: dc + "/scans-ro", want: scanwarden.CauseNoWritePermission, acl: smbcheck.StatusWarn, fixHas: "share"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := diagnose(t, lab, dir, tc.dest, "alice", "", "", &sentLedger{}, tc.noWrite)
			if r.Verdict.Cause != tc.want {
				t.Fatalf("verdict %s, want %s%s", r.Verdict.Cause, tc.want, reportString(r))
			}
			s := r.Step(smbcheck.StepACL)
			if s == nil || s.Status != tc.acl {
				t.Fatalf("acl step %+v, want %s%s", s, tc.acl, reportString(r))
			}
			if tc.fixHas != "" && !strings.Contains(strings.ToUpper(r.Verdict.Fix), strings.ToUpper(tc.fixHas)) {
				t.Errorf("fix does not mention %q: %s", tc.fixHas, r.Verdict.Fix)
			}
		})
	}
}

// TestLabDiagnosisLocalAccountAndHost: on a server in no domain the account
// is local, so AD is not asked about it (no unknown-user); the server's
// computer object still is, and a Windows client edition is warned about
// even though the check passes.
func TestLabDiagnosisLocalAccountAndHost(t *testing.T) {
	lab := testlab.Require(t)
	dir := labDir(t, lab, nil)
	dest := "//smb2srv." + lab.DNSDomain + "/scans"
	r := diagnose(t, lab, dir, dest, "scanuser", "", "", &sentLedger{}, true)
	s := r.Step(smbcheck.StepAD)
	if !r.OK() || s == nil || s.Status != smbcheck.StatusOK || !strings.Contains(s.Detail, "local") {
		t.Fatalf("verdict %s, ad step %+v%s", r.Verdict.Cause, s, reportString(r))
	}
	labComputer(t, lab, "SMB2SRV", "Windows 11 Pro", "10.0 (26100)")
	r = diagnose(t, lab, dir, dest, `SMB2SRV\scanuser`, "", "", &sentLedger{}, true)
	s = r.Step(smbcheck.StepAD)
	if !r.OK() || s == nil || s.Status != smbcheck.StatusWarn || !strings.Contains(s.Detail, "20") || !strings.Contains(r.Verdict.Summary, "20") {
		t.Fatalf("verdict %s %q, ad step %+v%s", r.Verdict.Cause, r.Verdict.Summary, s, reportString(r))
	}
	// Stored as an address without reverse DNS: found by the NetBIOS name
	// the server gives in NTLM, in the same question.
	r = diagnose(t, lab, dir, "//"+lab.SMB2IP+"/scans", "scanuser", "", "", &sentLedger{}, true)
	if s = r.Step(smbcheck.StepAD); !r.OK() || s == nil || s.Status != smbcheck.StatusWarn || s.Evidence["host"] != "smb2srv."+lab.DNSDomain {
		t.Fatalf("by address: verdict %s, ad step %+v%s", r.Verdict.Cause, s, reportString(r))
	}
}

// TestLabDiagnosisSilentDC: a DC that accepts the connection and never
// answers (the lab's tarpit) takes the directory's whole timeout; that time
// must not count against the SMB logon it was asked within.
func TestLabDiagnosisSilentDC(t *testing.T) {
	lab := testlab.Require(t)
	silent := labDir(t, lab, func(c *Config) { c.URL = "ldaps://" + lab.TarpitIP + ":445"; c.Timeout = 3 * time.Second })
	tg, err := scanwarden.ParseDestination("//" + lab.DCHost + "/scans")
	if err != nil {
		t.Fatal(err)
	}
	tg.User, tg.Password = "alice", scanwarden.NewSecret(lab.Password)
	r := smbcheck.Run(context.Background(), tg, smbcheck.Options{MaxFailures: smbcheck.DefaultMaxFailures, Directory: silent, StepTimeout: 2 * time.Second, NoWrite: true})
	if !r.OK() {
		t.Fatalf("a silent DC spoiled the check: %s%s", r.Verdict.Cause, reportString(r))
	}
	if s := r.Step(smbcheck.StepAD); s == nil || s.Status != smbcheck.StatusWarn {
		t.Errorf("ad step: %+v", s)
	}
}

// TestLabDiagnosisDotUserOnDC: a DC has no local accounts, so .\user and
// DC1\user typed on the MFP are domain accounts there: AD is asked, and a
// disabled or locked account is reported without a single logon sent (the
// DC's badPwdCount does not move).
func TestLabDiagnosisDotUserOnDC(t *testing.T) {
	lab := testlab.Require(t)
	dir := labDir(t, lab, nil)
	dest := "//" + lab.DCHost + "/scans"
	badPwd := func(sam string) (int, bool) {
		t.Helper()
		u, err := dir.User(context.Background(), sam, "")
		if err != nil || !u.Found {
			t.Fatalf("AD does not know %s (lab older than this test? bring it up again): %v", sam, err)
		}
		return u.BadPwdCount, u.Locked
	}
	if _, locked := badPwd("dotlocked"); !locked {
		// Three bad binds lock it for the lockout duration (30 min).
		for i := range 3 {
			if err := bindAs(t, lab, "dotlocked@"+lab.DNSDomain, fmt.Sprintf("wrong-%d-%s", i, lab.Password)); err == nil {
				t.Fatal("a wrong password bound")
			}
		}
		if _, locked := badPwd("dotlocked"); !locked {
			t.Fatal("dotlocked is not locked after three bad binds")
		}
	}
	tests := []struct {
		user, pw string
		want     scanwarden.Cause
	}{
		{user: `.\dotdisabled`, pw: "Wrong-" + lab.Password, want: scanwarden.CauseAccountDisabled},
		{user: `DC1\dotdisabled`, pw: "Wrong-" + lab.Password, want: scanwarden.CauseAccountDisabled},
		{user: `.\dotlocked`, want: scanwarden.CauseAccountLocked},
		{user: `.\dotlocked`, pw: "Wrong-" + lab.Password, want: scanwarden.CauseAccountLocked},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			sam := tc.user[strings.Index(tc.user, `\`)+1:]
			before, _ := badPwd(sam)
			led := &sentLedger{}
			r := diagnose(t, lab, dir, dest, tc.user, tc.pw, "", led, true)
			if r.Verdict.Cause != tc.want {
				t.Fatalf("verdict %s, want %s%s", r.Verdict.Cause, tc.want, reportString(r))
			}
			if led.sent != 0 {
				t.Errorf("%d logons sent", led.sent)
			}
			if s := r.Step(smbcheck.StepAD); s == nil || s.Evidence["host_dc"] != true {
				t.Errorf("the ad step did not find the DC's computer object:%s", reportString(r))
			}
			if after, _ := badPwd(sam); after != before {
				t.Errorf("badPwdCount %d → %d: a logon reached the DC", before, after)
			}
		})
	}
}
