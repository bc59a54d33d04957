// Package smbcheck replays a scan destination's SMB logon the way a Kyocera
// MFP does it, one protocol layer at a time — name, TCP, negotiate, session
// (and other user name forms), share, folder, write — and names the cause of
// a failure from a fixed vocabulary with the fix.
//
// A check is polite: one session, at most one extra connection at a time,
// logged off at the end, and never more failed logons than the account's
// budget allows (see Ledger).
package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// Run checks one destination. It always returns a Report: a check that
// finds a problem has run fine.
func Run(ctx context.Context, t Target, o Options) Report {
	devErr := deviceFits(t, o.Device)
	o.defaults()
	c := &checker{t: t, o: o, record: record{r: Report{Target: t.Info(), Started: o.Now(), Profile: o.profile()}, progress: o.Progress, noDirectory: o.Directory == nil}}
	c.ledger = o.Ledger
	if c.ledger == nil {
		c.ledger = &MemoryLedger{}
	}
	if err := t.Validate(); err != nil {
		c.invalid(err, "destination", "Correct the destination on the MFP.")
		return c.r
	}
	if devErr != nil {
		c.invalid(devErr, "device", "Correct the device's SMB profile.")
		return c.r
	}
	if o.Device.NoKerberos && t.auth() == AuthAuto {
		// The MFP tries no Kerberos: its auto is NTLM.
		c.t.Auth = AuthNTLM
	}
	defer c.cleanup()
	c.run(ctx)
	c.finish()
	if ctx.Err() != nil {
		// Stopped (Ctrl-C, SIGTERM, a deadline): the verdict covers only
		// the steps that ran.
		c.r.Interrupted = true
		c.r.Verdict.Summary = "The check was interrupted; from the steps that ran: " + c.r.Verdict.Summary
	}
	return c.r
}

// invalid ends a check whose destination (what) or device cannot be
// replayed: the target step names the field.
func (c *checker) invalid(err error, what, fix string) {
	s := c.begin("target")
	var fe *scanwarden.FieldError
	if errors.As(err, &fe) {
		s.Evidence["field"] = fe.Field
		if what == "destination" {
			fix = fmt.Sprintf("Correct the destination's %s on the MFP.", panelSetting(fe.Field))
		} else {
			fix = fmt.Sprintf("Correct the device's SMB profile (%s).", fe.Field)
		}
	}
	c.fail(s, CauseUnknown, "the "+what+" cannot be checked: "+err.Error(), fix)
	c.finish()
}

// deviceFits is d.Validate and what d cannot do that t asks for.
func deviceFits(t Target, d Device) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if d.NoKerberos && t.Auth == AuthKerberos {
		return scanwarden.BadField("device_no_kerberos", true, "the destination logs on with Kerberos, which the device cannot")
	}
	return nil
}

// A step is one layer of the diagnosis over the check's connection: run
// records the step's own report entries (ids) — evidence, status, cause —
// and reports whether the check goes on. A step that fails has every step
// after it (and its own ids it did not reach) recorded as skipped.
type step interface {
	ids() []string
	run(ctx context.Context) bool
}

// steps are the check's layers in order.
func (c *checker) steps() []step {
	return []step{nameStep{c}, tcpStep{c}, negotiateStep{c}, sessionStep{c}, treeStep{c}, pathStep{c}, writeStep{c}, aclStep{c}}
}

func (c *checker) run(ctx context.Context) {
	defer c.noteSMB1Replay()
	steps := c.steps()
	for i, s := range steps {
		if s.run(ctx) {
			continue
		}
		for _, later := range steps[i:] {
			c.skip(later.ids()...)
		}
		return
	}
}

// noteSMB1Replay says in the verdict what the SMB1 replay of an SMB1-only
// server proved when no later step failed.
func (c *checker) noteSMB1Replay() {
	if !c.smb1 || c.o.Device.SMB1Only || c.firstFx == nil || c.firstFx.cause != CauseSMB1OnlyServer {
		return
	}
	for _, s := range c.r.Steps {
		if s.ID != StepNegotiate && s.Status == StatusFail {
			return
		}
	}
	c.firstFx.summary = "the server speaks only SMB1; replayed over SMB1, every later step passes: only an MFP with its SMB1 client enabled can store scans here"
	c.firstFx.fix = "Enable SMB2/SMB3 on the server (Samba: server min protocol = SMB2_02; Windows: the SMB 2 feature); until then the MFP's SMB1 client must stay enabled (Command Center RX → Network Settings → Protocol → SMB)."
}

// --- step bookkeeping --------------------------------------------------

func (c *checker) finish() {
	v := Verdict{Cause: CauseOK}
	for _, s := range c.r.Steps {
		if s.Status != StatusFail || s.Cause == "" {
			continue
		}
		if v.Cause == CauseOK {
			v.Cause = s.Cause
		} else if s.Cause != v.Cause && !containsCause(v.Also, s.Cause) {
			v.Also = append(v.Also, s.Cause)
		}
	}
	info := v.Cause.Info()
	v.KyoceraCode, v.Summary, v.Fix = info.KyoceraCode, info.Summary, info.Fix
	if c.firstFx != nil && c.firstFx.cause == v.Cause {
		if c.firstFx.summary != "" {
			// What the check saw says more than the cause's generic line.
			v.Summary = c.upperFirst(c.firstFx.summary) + "."
		}
		if c.firstFx.fix != "" {
			v.Fix = c.firstFx.fix
		}
	}
	for _, a := range c.also {
		if a != v.Cause && a != CauseOK && !containsCause(v.Also, a) {
			v.Also = append(v.Also, a)
		}
	}
	if c.ledgerHit != nil && c.ledgerHit.Cause == v.Cause {
		v.FromLedger = true
	}
	if v.Cause == CauseOK && len(c.warnings) > 0 {
		v.Summary += " Warnings: " + strings.Join(c.warnings, "; ") + "."
	}
	c.r.Verdict = v
	c.r.Server = c.server
}

func containsCause(cs []Cause, c Cause) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// upperFirst starts a sentence with a capital — unless it starts with a name
// the admin typed or the server gave, which is printed exactly as it is.
func (c *checker) upperFirst(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	for _, n := range []string{c.t.User, c.form.Typed, c.t.Host, c.t.Share, c.addr} {
		if n != "" && strings.HasPrefix(s, n) {
			return s
		}
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func (c *checker) cleanup() {
	if c.sess != nil {
		c.sess.Close()
	}
	if c.conn != nil {
		c.conn.Close()
	}
}
