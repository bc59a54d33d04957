package smbcheck

// Every cause a lab peer can produce, provoked on that peer (see
// testlab/README.md for the peers and accounts).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

const wrongPassword = "Not-The-Password-1"

type labCase struct {
	name  string
	dest  string
	user  string
	pw    string // "" = the lab password
	ws    string // workstation the MFP sends ("" = default)
	opts  Options
	want  scanwarden.Cause
	check func(t *testing.T, r Report)
}

func labTarget(t *testing.T, lab *testlab.Lab, dest, user, pw string) scanwarden.Target {
	t.Helper()
	tg, err := scanwarden.ParseDestination(dest)
	if err != nil {
		t.Fatal(err)
	}
	if pw == "" {
		pw = lab.Password
	}
	tg.User, tg.Password = user, scanwarden.NewSecret(pw)
	return tg
}

func runLab(t *testing.T, lab *testlab.Lab, c labCase) Report {
	t.Helper()
	o := c.opts
	if o.MaxFailures == 0 {
		o.MaxFailures = DefaultMaxFailures // a case asks for zero with -1
	}
	if o.StepTimeout == 0 {
		o.StepTimeout = 5 * time.Second
	}
	if o.LocalNames == nil {
		o.LocalNames = labLocalNames(t, lab)
	}
	tg := labTarget(t, lab, c.dest, c.user, c.pw)
	tg.Workstation = c.ws
	r := Run(context.Background(), tg, o)
	if r.Verdict.Cause != c.want {
		t.Fatalf("%s: verdict %s, want %s%s", c.dest, r.Verdict.Cause, c.want, stepsString(r))
	}
	if r.Verdict.Summary == "" || r.Verdict.Fix == "" {
		t.Errorf("verdict without summary or fix: %+v", r.Verdict)
	}
	if strings.Contains(stepsString(r)+r.Verdict.Summary+r.Verdict.Fix, lab.Password) {
		t.Fatal("the password appears in the report")
	}
	if c.check != nil {
		c.check(t, r)
	}
	return r
}

func stepIs(t *testing.T, r Report, id string, st Status) *Step {
	t.Helper()
	s := r.Step(id)
	if s == nil {
		t.Fatalf("no step %s:%s", id, stepsString(r))
	}
	if s.Status != st {
		t.Fatalf("step %s is %s, want %s:%s", id, s.Status, st, stepsString(r))
	}
	return s
}

// labFolder makes sure a folder exists in the DC's scans share.
func labFolder(t *testing.T, lab *testlab.Lab, name string) {
	t.Helper()
	s := labSession(t, lab, lab.DCIP, "alice")
	sh, err := s.Mount(`\\` + lab.DCIP + `\scans`)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	if err := sh.Mkdir(name, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatalf("mkdir scans\\%s: %v", name, err)
	}
}

func TestLabCauses(t *testing.T) {
	lab := testlab.Require(t)
	dc := "//" + lab.DCHost
	labFolder(t, lab, "alice")
	cases := []labCase{
		{name: "ok", dest: dc + "/scans", user: lab.Domain + `\alice`, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			for _, id := range []string{StepName, StepTCP, StepNegotiate, StepSession, StepTree, StepPath, StepWrite} {
				if s := r.Step(id); s == nil || (s.Status != StatusOK && s.Status != StatusSkipped) {
					t.Errorf("step %s not ok:%s", id, stepsString(r))
				}
			}
			if r.Server == nil || r.Server.NetBIOSDomain != lab.Domain || r.Server.DNSDomain != lab.DNSDomain || !r.Server.SMB2 {
				t.Errorf("negotiate did not learn the domain: %+v", r.Server)
			}
			if r.Canary != "" {
				t.Errorf("canary left behind: %s", r.Canary)
			}
		}},
		{name: "ok-bare-user-subfolder", dest: dc + "/scans/alice", user: "alice", want: scanwarden.CauseOK},
		{name: "ok-port-139", dest: dc + ":139/scans", user: "alice", want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepTCP, StatusOK); s.Evidence["port"] != 139 {
				t.Errorf("tcp evidence %v", s.Evidence)
			}
		}},
		{name: "bare-name-only-via-search", dest: "//dc1/scans", user: "alice", want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepName, StatusWarn)
			if s.Evidence["resolved_as"] != "dc1."+lab.DNSDomain {
				t.Errorf("name evidence %v", s.Evidence)
			}
		}},
		{name: "name-unresolved", dest: "//nosuchhost." + lab.DNSDomain + "/scans", user: "alice", want: scanwarden.CauseNameUnresolved, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepTCP, StatusSkipped)
			if r.Verdict.KyoceraCode != "1101" {
				t.Errorf("code %s", r.Verdict.KyoceraCode)
			}
		}},
		{name: "name-unresolved-bare-known-domain", dest: "//nosuchhost/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, DNSDomains: []string{lab.DNSDomain}}, want: scanwarden.CauseNameUnresolved},
		{name: "bare-resolves-under-domain", dest: "//dc1/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, DNSDomains: []string{lab.DNSDomain}, resolvConf: os.DevNull, Resolver: noSearchResolver{}}, want: scanwarden.CauseNameUnresolved, check: func(t *testing.T, r Report) {
			if !strings.Contains(r.Verdict.Fix, "dc1."+lab.DNSDomain) {
				t.Errorf("fix does not name the full name: %s", r.Verdict.Fix)
			}
		}},
		{name: "host-unreachable", dest: "//" + lab.GhostIP + "/scans", user: "alice", want: scanwarden.CauseHostUnreachable, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepTCP, StatusFail)
			if s.Evidence["errno"] != "ECONNREFUSED" || s.Evidence["port_139"] == nil {
				t.Errorf("tcp evidence %v", s.Evidence)
			}
		}},
		{name: "not-smb-port-ldap", dest: "//" + lab.DCIP + ":389/scans", user: "alice", want: scanwarden.CauseNotSMBPort, check: notSMBPortAt(389, 445)},
		{name: "not-smb-port-dns", dest: "//" + lab.DCIP + ":53/scans", user: "alice", want: scanwarden.CauseNotSMBPort, check: notSMBPortAt(53, 445)},
		{name: "not-smb-port-smb1-device", dest: "//" + lab.DCIP + ":389/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, Device: Device{SMB1Only: true}}, want: scanwarden.CauseNotSMBPort, check: notSMBPortAt(389, 445)},
		{name: "timeout", dest: "//" + lab.TarpitIP + "/scans", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, StepTimeout: 1500 * time.Millisecond}, want: scanwarden.CauseTimeout, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepNegotiate, StatusFail)
		}},
		{name: "smb1-only-server", dest: "//" + lab.SMB1IP + "/scans", user: "scanuser", want: scanwarden.CauseSMB1OnlyServer, check: func(t *testing.T, r Report) {
			if r.Server == nil || !r.Server.SMB1 || r.Server.SMB2 {
				t.Errorf("server info %+v", r.Server)
			}
		}},
		{name: "smb1-refused", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", opts: Options{MaxFailures: DefaultMaxFailures, Device: Device{SMB1Only: true}}, want: scanwarden.CauseSMB1Refused},
		{name: "smb1-device-ok-on-smb1-server", dest: "//" + lab.SMB1IP + "/scans", user: "scanuser", opts: Options{MaxFailures: DefaultMaxFailures, Device: Device{SMB1Only: true}},
			// The pair works over SMB1: replayed over SMB1 to the canary.
			want: scanwarden.CauseOK},
		{name: "smb2-only-server-ok", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", want: scanwarden.CauseOK},
		{name: "signing-info", dest: "//" + lab.SignIP + "/scans", user: "scanuser", want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			// Information, not a warning: an MFP that cannot sign is
			// judged with Device.NoSigning (signing-required below).
			s := stepIs(t, r, StepNegotiate, StatusOK)
			if s.Evidence["signing_required"] != true || !strings.Contains(s.Detail, "signing required") || strings.Contains(r.Verdict.Summary, "Warnings") {
				t.Errorf("signing: %v / %s / %s", s.Evidence, s.Detail, r.Verdict.Summary)
			}
		}},
		{name: "guest-session", dest: "//guestsrv." + lab.DNSDomain + "/scans", user: "nosuchuser", pw: "whatever", want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepSession, StatusWarn)
			if s.Evidence["guest"] != true || !strings.Contains(r.Verdict.Summary, "as guest") {
				t.Errorf("guest session not reported: %v / %s", s.Evidence, r.Verdict.Summary)
			}
		}},
		{name: "signing-required", dest: "//" + lab.SignIP + "/scans", user: "scanuser", opts: Options{MaxFailures: DefaultMaxFailures, Device: Device{NoSigning: true}}, want: scanwarden.CauseSigningRequired},
		{name: "wrong-user-format", dest: dc + "/scans", user: "john.doe", want: scanwarden.CauseWrongUserFormat, check: func(t *testing.T, r Report) {
			if r.WorkingForm == nil || r.WorkingForm.Typed != "john.doe@"+lab.DNSDomain {
				t.Fatalf("working form %+v", r.WorkingForm)
			}
			if !strings.Contains(r.Verdict.Fix, "john.doe@"+lab.DNSDomain) {
				t.Errorf("fix does not say what to type: %s", r.Verdict.Fix)
			}
			stepIs(t, r, StepWrite, StatusOK) // the check went on with the working form
		}},
		{name: "wrong-user-format-standalone", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser@" + lab.DNSDomain, want: scanwarden.CauseWrongUserFormat},
		{name: "account-disabled", dest: dc + "/scans", user: "dave", want: scanwarden.CauseAccountDisabled},
		{name: "account-locked", dest: dc + "/scans", user: "erin", want: scanwarden.CauseAccountLocked, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepForms, StatusSkipped)
		}},
		{name: "password-must-change", dest: dc + "/scans", user: "frank", want: scanwarden.CausePasswordMustChange},
		{name: "password-expired", dest: dc + "/scans", user: "grace", want: scanwarden.CausePasswordExpired},
		{name: "account-expired", dest: dc + "/scans", user: "heidi", want: scanwarden.CauseAccountExpired},
		{name: "workstation-restricted", dest: dc + "/scans", user: "ivan", want: scanwarden.CauseWorkstationRestricted, check: func(t *testing.T, r Report) {
			if !strings.Contains(r.Verdict.Fix, scanwarden.DefaultWorkstation) {
				t.Errorf("fix does not name the MFP's workstation name: %s", r.Verdict.Fix)
			}
		}},
		{name: "workstation-allowed", dest: dc + "/scans", user: "ivan", ws: "MFP01", want: scanwarden.CauseOK},
		{name: "logon-hours", dest: dc + "/scans", user: "judy", want: scanwarden.CauseLogonHours},
		{name: "share-not-found", dest: dc + "/nosuchshare", user: "alice", want: scanwarden.CauseShareNotFound, check: func(t *testing.T, r Report) {
			if s := stepIs(t, r, StepTree, StatusFail); !strings.Contains(fmt.Sprint(s.Evidence["nt_status"]), "BAD_NETWORK_NAME") {
				t.Errorf("tree evidence %v", s.Evidence)
			}
		}},
		{name: "share-access-denied", dest: dc + "/restricted", user: "alice", want: scanwarden.CauseShareAccessDenied},
		{name: "share-allowed-for-bob", dest: dc + "/restricted", user: "bob", want: scanwarden.CauseOK},
		{name: "path-not-found", dest: dc + "/scans/nosuch/deeper", user: "alice", want: scanwarden.CausePathNotFound, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepPath, StatusFail)
			if s.Evidence["missing"] != "nosuch" {
				t.Errorf("path evidence %v", s.Evidence)
			}
		}},
		{name: "no-write-readonly", dest: dc + "/scans/readonly", user: "alice", want: scanwarden.CauseNoWritePermission},
		{name: "no-write-finance-acl", dest: dc + "/scans/finance", user: "alice", want: scanwarden.CauseNoWritePermission},
		{name: "no-write-deny-ace", dest: dc + "/scans/denied", user: "alice", want: scanwarden.CauseNoWritePermission},
		{name: "no-delete-permission", dest: dc + "/scans/nodelete", user: "alice", want: scanwarden.CauseNoDeletePermission, check: func(t *testing.T, r Report) {
			// The creator's delete-on-close handle removes the canary all
			// the same: nothing is left behind, nothing to delete by hand.
			w := stepIs(t, r, StepWrite, StatusFail)
			if r.Canary != "" || w.Evidence["delete_on_close"] != true || !strings.Contains(r.Verdict.Summary, "cannot delete") {
				t.Errorf("canary %q, evidence %v, summary %s", r.Canary, w.Evidence, r.Verdict.Summary)
			}
			s := labSession(t, lab, lab.DCIP, "alice")
			sh, err := s.Mount(`\\` + lab.DCIP + `\scans`)
			if err != nil {
				t.Fatal(err)
			}
			defer sh.Umount()
			if _, err := sh.Stat(fmt.Sprint(w.Evidence["canary"])); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("canary %v still in the folder: %v", w.Evidence["canary"], err)
			}
		}},
		{name: "disk-full", dest: dc + "/full", user: "alice", want: scanwarden.CauseDiskFull, check: func(t *testing.T, r Report) {
			if r.Canary != "" {
				t.Errorf("canary left on the full disk: %s", r.Canary)
			}
		}},
		{name: "no-write-flag", dest: dc + "/scans/readonly", user: "alice", opts: Options{MaxFailures: DefaultMaxFailures, NoWrite: true}, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepWrite, StatusSkipped)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.want == scanwarden.CauseAccountLocked {
				lab.LockErin(t)
			}
			runLab(t, lab, c)
		})
	}
}

// notSMBPortAt checks a not-smb-port verdict for stored port that names
// the SMB port that answers.
func notSMBPortAt(stored, smb int) func(t *testing.T, r Report) {
	return func(t *testing.T, r Report) {
		s := stepIs(t, r, StepNegotiate, StatusFail)
		if ev := fmt.Sprint(s.Evidence[fmt.Sprintf("port_%d", smb)]); !strings.HasPrefix(ev, "smb ") {
			t.Errorf("port %d evidence %q", smb, ev)
		}
		if want := fmt.Sprintf("Port Number on the MFP to %d", smb); !strings.Contains(r.Verdict.Fix, want) {
			t.Errorf("fix does not say %q: %s", want, r.Verdict.Fix)
		}
		if want := fmt.Sprintf("on port %d, but not as an SMB server", stored); !strings.Contains(r.Verdict.Summary, want) {
			t.Errorf("summary does not say %q: %s", want, r.Verdict.Summary)
		}
		stepIs(t, r, StepSession, StatusSkipped)
	}
}

// noSearchResolver resolves only names with a dot, like an MFP without a
// DNS domain.
type noSearchResolver struct{}

func (noSearchResolver) LookupHost(ctx context.Context, host string) ([]string, error) {
	if !strings.Contains(strings.TrimSuffix(host, "."), ".") {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return net.DefaultResolver.LookupHost(ctx, host)
}

func TestLabBadCredentialsWithinBudget(t *testing.T) {
	lab := testlab.Require(t)
	dest := "//" + lab.DCHost + "/scans"
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	r := runLab(t, lab, labCase{dest: dest, user: "badpw1", pw: wrongPassword, opts: Options{MaxFailures: DefaultMaxFailures, Ledger: led}, want: scanwarden.CauseBadCredentials})
	if led.sent != 2 {
		t.Errorf("sent %d failing logons, want exactly the budget of 2", led.sent)
	}
	forms := stepIs(t, r, StepForms, StatusFail)
	if forms.Evidence["not_tried"] == nil {
		t.Errorf("forms step does not list the forms it kept back: %v", forms.Evidence)
	}
	// A second check in the window replays nothing and repeats the last result.
	r2 := runLab(t, lab, labCase{dest: dest, user: "badpw1", pw: wrongPassword, opts: Options{MaxFailures: DefaultMaxFailures, Ledger: led}, want: scanwarden.CauseBadCredentials})
	if led.sent != 2 || !r2.Verdict.FromLedger {
		t.Errorf("second check sent logons (%d) or did not say it used the ledger: %+v", led.sent, r2.Verdict)
	}
	// Even the right password is not sent while the budget is spent: the
	// check cannot know it is right.
	r3 := Run(context.Background(), labTarget(t, lab, dest, "badpw1", ""), Options{MaxFailures: DefaultMaxFailures, Ledger: led, StepTimeout: 5 * time.Second})
	if led.sent != 2 || r3.OK() {
		t.Errorf("a third logon was sent within the spent budget: %s", stepsString(r3))
	}
	// The account is not locked: a direct logon works (and clears its bad count).
	labSession(t, lab, lab.DCIP, "badpw1")
}

// TestLabTwentyChecksNeverLock is the lockout-safety proof: 20 checks in a
// row with a wrong password against a threshold-3 account leave it unlocked.
func TestLabTwentyChecksNeverLock(t *testing.T) {
	lab := testlab.Require(t)
	dest := "//" + lab.DCHost + "/scans"
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	for i := range 20 {
		r := Run(context.Background(), labTarget(t, lab, dest, "badpw2", wrongPassword), Options{MaxFailures: DefaultMaxFailures, Ledger: led, StepTimeout: 5 * time.Second})
		if r.Verdict.Cause != scanwarden.CauseBadCredentials {
			t.Fatalf("check %d: verdict %s%s", i+1, r.Verdict.Cause, stepsString(r))
		}
	}
	if led.sent > 2 {
		t.Fatalf("20 checks sent %d failing logons", led.sent)
	}
	// Not locked: a direct logon with the right password works.
	labSession(t, lab, lab.DCIP, "badpw2")
}

// TestLabBudgetZeroReplaysNothing: with a budget of 0 no logon is sent.
func TestLabBudgetZeroReplaysNothing(t *testing.T) {
	lab := testlab.Require(t)
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	r := Run(context.Background(), labTarget(t, lab, "//"+lab.DCHost+"/scans", "badpw3", wrongPassword), Options{Ledger: led, MaxFailures: -1, StepTimeout: 5 * time.Second})
	if led.sent != 0 {
		t.Fatalf("budget 0 sent %d logons", led.sent)
	}
	s := stepIs(t, r, StepSession, StatusFail)
	if !strings.Contains(s.Detail, "not replayed") {
		t.Errorf("session step does not say it replayed nothing: %s", s.Detail)
	}
}

// TestLabConnectionLimit fills the "max connections = 2" share, then checks.
func TestLabConnectionLimit(t *testing.T) {
	lab := testlab.Require(t)
	// Fill the share until it refuses: normally two holders, fewer when a
	// connection of another client (or one smbd has not yet cleaned up) still
	// counts. A share that takes four is not limited at all.
	full := false
	for i := 0; i < 4 && !full; i++ {
		s := labSession(t, lab, lab.DCIP, []string{"alice", "bob"}[i%2])
		sh, err := s.Mount(`\\` + lab.DCIP + `\limited`)
		var re *smb2.ResponseError
		switch {
		case err == nil:
			t.Cleanup(func() { sh.Umount() })
		case errors.As(err, &re) && re.Code == uint32(ntstatus.InsufficientResources):
			full = true
		default:
			t.Fatalf("holder %d mount: %v", i, err)
		}
	}
	if !full {
		t.Fatal("the limited share took four connections: max connections is not in force")
	}
	runLab(t, lab, labCase{dest: "//" + lab.DCHost + "/limited", user: "alice", want: scanwarden.CauseConnectionLimit, check: func(t *testing.T, r Report) {
		s := stepIs(t, r, StepTree, StatusFail)
		if !strings.Contains(fmt.Sprint(s.Evidence["nt_status"]), "INSUFFICIENT_RESOURCES") {
			t.Errorf("tree evidence %v", s.Evidence)
		}
	}})
}

// TestLabCanaryRemovedWhenInterrupted cancels the check right after the
// canary is created: the file must still be gone.
func TestLabCanaryRemovedWhenInterrupted(t *testing.T) {
	lab := testlab.Require(t)
	labFolder(t, lab, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := Run(ctx, labTarget(t, lab, "//"+lab.DCHost+"/scans/alice", "alice", ""), Options{MaxFailures: DefaultMaxFailures, StepTimeout: 5 * time.Second, afterCreate: cancel})
	w := r.Step(StepWrite)
	if w == nil || w.Status != StatusFail {
		t.Fatalf("write step after interruption: %+v", w)
	}
	canary := fmt.Sprint(w.Evidence["canary"])
	s := labSession(t, lab, lab.DCIP, "alice")
	sh, err := s.Mount(`\\` + lab.DCIP + `\scans`)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	if _, err := sh.Stat(canary); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("canary %s still there after an interrupted check (stat err %v)", canary, err)
	}
	if r.Canary != "" {
		t.Errorf("report names a leftover canary %s", r.Canary)
	}
}

func labSession(t *testing.T, lab *testlab.Lab, ip, user string) *smb2.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: user, Password: lab.Password, Domain: lab.Domain}}
	s, err := d.Dial(ctx, ip+":445")
	if err != nil {
		t.Fatalf("session as %s: %v", user, err)
	}
	t.Cleanup(func() { s.Logoff() })
	return s
}

// countingLedger counts the logons a ledger let through.
type countingLedger struct {
	smbclient.Ledger
	mu   sync.Mutex
	sent int
}

func (c *countingLedger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	id, r, err := c.Ledger.Reserve(ctx, a, since, budget)
	if id != 0 {
		c.mu.Lock()
		c.sent++
		c.mu.Unlock()
	}
	return id, r, err
}
