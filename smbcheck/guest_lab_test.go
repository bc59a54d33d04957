package smbcheck

// Guest and blank destinations against the lab's real peers: guestsrv
// (map to guest = bad user; share scans takes guests, private does not),
// the DC (anonymous session, no guest share), signsrv (signing mandatory;
// share public takes guests), smb1srv (anonymous over SMB1).

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

const blank = "\x00blank" // labCase password marker: an empty Login Password

func runGuestCase(t *testing.T, lab *testlab.Lab, c labCase) Report {
	t.Helper()
	if c.opts.MaxFailures == 0 {
		c.opts.MaxFailures = DefaultMaxFailures
	}
	if c.pw != blank {
		return runLab(t, lab, c)
	}
	tg := labTarget(t, lab, c.dest, c.user, "")
	tg.Password = scanwarden.NewSecret("")
	o := c.opts
	o.StepTimeout = 5 * time.Second
	r := Run(context.Background(), tg, o)
	if r.Verdict.Cause != c.want {
		t.Fatalf("%s as %q: verdict %s, want %s%s", c.dest, c.user, r.Verdict.Cause, c.want, stepsString(r))
	}
	if r.Verdict.Summary == "" || r.Verdict.Fix == "" {
		t.Errorf("verdict without summary or fix: %+v", r.Verdict)
	}
	if c.check != nil {
		c.check(t, r)
	}
	return r
}

func TestLabGuest(t *testing.T) {
	lab := testlab.Require(t)
	guest := "//" + lab.GuestIP
	anonymousOK := func(t *testing.T, r Report) {
		t.Helper()
		s := stepIs(t, r, StepSession, StatusWarn)
		if s.Evidence["anonymous"] != true {
			t.Errorf("session evidence %v", s.Evidence)
		}
		stepIs(t, r, StepWrite, StatusOK)
		if !strings.Contains(r.Verdict.Summary, "account") {
			t.Errorf("ok verdict does not advise an account: %s", r.Verdict.Summary)
		}
	}
	bothWaysOut := func(t *testing.T, r Report) {
		t.Helper()
		if !strings.Contains(r.Verdict.Fix, "account") || !strings.Contains(r.Verdict.Fix, "guest access") {
			t.Errorf("fix does not name both ways out: %s", r.Verdict.Fix)
		}
	}
	for _, c := range []labCase{
		{name: "anonymous accepted, share takes guests", dest: guest + "/scans", user: "", pw: blank, want: scanwarden.CauseOK, check: anonymousOK},
		{name: "anonymous accepted, share refuses guests", dest: guest + "/private", user: "", pw: blank, want: scanwarden.CauseGuestRefused, check: func(t *testing.T, r Report) {
			stepIs(t, r, StepSession, StatusWarn)
			s := stepIs(t, r, StepTree, StatusFail)
			if !strings.Contains(s.Detail, "takes no guests") {
				t.Errorf("tree detail %q", s.Detail)
			}
			bothWaysOut(t, r)
		}},
		{name: "unknown name mapped to guest, share takes guests", dest: guest + "/scans", user: "nosuchuser", pw: wrongPassword, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			s := stepIs(t, r, StepSession, StatusWarn)
			if s.Evidence["mapped_to_guest"] != true || !strings.Contains(s.Detail, "does not know the account nosuchuser") {
				t.Errorf("session %q %v", s.Detail, s.Evidence)
			}
			if !strings.Contains(r.Verdict.Summary, "does not know the account nosuchuser") {
				t.Errorf("verdict summary %q", r.Verdict.Summary)
			}
		}},
		{name: "unknown name mapped to guest, share refuses guests", dest: guest + "/private", user: "nosuchuser", pw: wrongPassword, want: scanwarden.CauseUnknownUser, check: func(t *testing.T, r Report) {
			if !strings.Contains(r.Verdict.Summary, "does not know the account nosuchuser") {
				t.Errorf("verdict summary %q", r.Verdict.Summary)
			}
		}},
		{name: "named account on the guest server", dest: guest + "/private", user: "scanuser", want: scanwarden.CauseOK},
		{name: "DC: anonymous session, no guest share", dest: "//" + lab.DCHost + "/scans", user: "", pw: blank, want: scanwarden.CauseGuestRefused, check: bothWaysOut},
		{name: "signing required: anonymous refused by the share", dest: "//" + lab.SignIP + "/scans", user: "", pw: blank, want: scanwarden.CauseGuestRefused, check: func(t *testing.T, r Report) {
			if !strings.Contains(r.Verdict.Summary, "requires SMB signing") {
				t.Errorf("summary does not name signing: %s", r.Verdict.Summary)
			}
		}},
		{name: "signing required: a guest share lets the anonymous session in", dest: "//" + lab.SignIP + "/public", user: "", pw: blank, want: scanwarden.CauseOK, check: func(t *testing.T, r Report) {
			anonymousOK(t, r)
			if s := r.Step(StepSession); !strings.Contains(s.Detail, "signing") {
				t.Errorf("session detail does not warn about signing: %s", s.Detail)
			}
		}},
		{name: "SMB1: anonymous session, no guest share", dest: "//" + lab.SMB1IP + "/scans", user: "", pw: blank, opts: Options{Device: Device{SMB1Only: true}}, want: scanwarden.CauseGuestRefused},
		{name: "blank password on a standalone account", dest: "//" + lab.SMB2IP + "/scans", user: "scanuser", pw: blank, want: scanwarden.CauseBadCredentials, check: func(t *testing.T, r Report) {
			if s := r.Step(StepForms); s == nil || s.Evidence["password"] != "empty" || !strings.Contains(r.Verdict.Fix, "Login Password") {
				t.Errorf("forms %+v, fix %q", s, r.Verdict.Fix)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { runGuestCase(t, lab, c) })
	}
}

// TestLabBlankPasswordDomainAccount: a domain account stored with an empty
// password is refused (badpw6: its own user, two failures at most, then a
// good logon resets its bad-password count).
func TestLabBlankPasswordDomainAccount(t *testing.T) {
	lab := testlab.Require(t)
	led := &countingLedger{Ledger: &smbclient.MemoryLedger{}}
	runGuestCase(t, lab, labCase{dest: "//" + lab.DCHost + "/scans", user: lab.Domain + `\badpw6`, pw: blank, opts: Options{Ledger: led}, want: scanwarden.CauseBadCredentials, check: func(t *testing.T, r Report) {
		if !strings.Contains(r.Verdict.Summary, "Login Password is empty") {
			t.Errorf("summary %q", r.Verdict.Summary)
		}
	}})
	if led.sent > DefaultMaxFailures {
		t.Errorf("%d logons sent, budget %d", led.sent, DefaultMaxFailures)
	}
	labSession(t, lab, lab.DCIP, "badpw6")
}
