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

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
)

// Run checks one destination. It always returns a Report: a check that
// finds a problem has run fine.
func Run(ctx context.Context, t scanwarden.Target, o Options) Report {
	devErr := deviceFits(t, o.Device)
	o.defaults()
	c := &checker{t: t, o: o, record: record{r: Report{Target: t.Info(), Started: o.Now(), Profile: o.profile()}, progress: o.Progress, noDirectory: o.Directory == nil}}
	c.ledger = o.Ledger
	if c.ledger == nil {
		c.ledger = &smbclient.MemoryLedger{}
	}
	if err := t.Validate(); err != nil {
		c.invalid(err, "destination", "Correct the destination on the MFP.")
		return c.r
	}
	if devErr != nil {
		c.invalid(devErr, "device", "Correct the device's SMB profile.")
		return c.r
	}
	if o.Device.NoKerberos && t.LogonAuth() == scanwarden.AuthAuto {
		// The MFP tries no Kerberos: its auto is NTLM.
		c.t.Auth = scanwarden.AuthNTLM
	}
	defer c.cleanup()
	c.run(ctx)
	c.settleFloor(true)
	negotiateStep{c}.forgetFloor()
	c.finish(c.server, c.verbatim())
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
	c.fail(s, scanwarden.CauseUnknown, "the "+what+" cannot be checked: "+err.Error(), fix)
	c.finish(c.server, c.verbatim())
}

// deviceFits is d.Validate and what d cannot do that t asks for.
func deviceFits(t scanwarden.Target, d Device) error {
	if err := d.Validate(); err != nil {
		return err
	}
	if d.NoKerberos && t.Auth == scanwarden.AuthKerberos {
		return scanwarden.BadField("device_no_kerberos", true, "the destination logs on with Kerberos, which the device cannot")
	}
	return nil
}

// steps are the check's layers in order.
func (c *checker) steps() []step {
	return []step{nameStep{c}, tcpStep{c}, negotiateStep{c}, sessionStep{c}, treeStep{c}, pathStep{c}, writeStep{c}, aclStep{c}}
}

func (c *checker) run(ctx context.Context) {
	steps := c.steps()
	for i, s := range steps {
		if s.run(ctx) {
			continue
		}
		for _, later := range steps[i:] {
			c.skip(later.ids()...)
		}
		break
	}
	c.noteSMB1Replay(c.smb1 && !c.o.Device.SMB1Only)
}

// verbatim are the names the admin typed or the server gave: a verdict's
// sentence that starts with one keeps it as it is.
func (c *checker) verbatim() []string {
	return []string{c.t.User, c.form.Typed, c.t.Host, c.t.Share, c.addr}
}

func (c *checker) cleanup() {
	if c.sess != nil {
		c.sess.Close()
	}
	if c.conn != nil {
		c.conn.Close()
	}
}

// panelSetting names a Target field as the MFP's address book shows it
// (Command Center RX → Address Book → the SMB destination).
func panelSetting(field string) string {
	switch field {
	case "host":
		return "Host Name"
	case "port":
		return "Port Number"
	case "share":
		return "Path (its first part, the share)"
	case "path":
		return "Path"
	case "user":
		return "Login User Name"
	case "password":
		return "Login Password"
	}
	return field
}
