package smbcheck

// The session step over Kerberos: auth kerberos and auto, and the Kerberos
// replay behind a server's NTLM refusal.

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
)

// stepSessionKerberos is the session step of a Kerberos-capable MFP. One
// NTLM negotiation whose AUTHENTICATE never leaves takes the negotiate and
// ad steps and learns the server's DNS names; then the Kerberos logon.
func (c sessionStep) stepSessionKerberos(ctx context.Context) bool {
	stored := smbclient.StoredForm(c.t.User)
	c.probing = true
	res := gatedLogon(c).attempt(ctx, c.conn, stored)
	c.probing = false
	c.conn = nil
	if res.stopped {
		return false
	}
	if !c.negotiated && !c.explainNegotiation(ctx, res) {
		return false
	}
	s := c.begin(StepSession)
	s.Evidence["auth"] = string(c.t.LogonAuth())
	s.Evidence["form"] = formEvidence(stored)
	k := kerberosReplay(c).logon().Try(ctx)
	k.Evidence(s.Evidence)
	s.Evidence["budget"] = c.budget
	if k.Sess != nil {
		c.sess, c.form = k.Sess, stored
		c.ok(s, k.Detail)
		c.skipWhy("not needed: the Kerberos logon succeeded", StepForms)
		return true
	}
	if c.t.LogonAuth() == scanwarden.AuthAuto && k.Fallback && k.Refused == nil {
		// Kerberos could not judge the password: as the MFP, try NTLM.
		s.Duration = 0
		return c.stepSessionNTLM(ctx, k)
	}
	if k.Refused != nil {
		c.refused(s, k.Refused)
		c.skipWhy("not run: nothing more may be replayed now", StepForms)
		return false
	}
	detail, fix := kerberosReplay(c).failure(k)
	c.fail(s, k.Cause, detail, fix)
	c.skipWhy("not tried: a Kerberos logon names its principal, not a user name form", StepForms)
	return false
}

// kerberosReplay is the check's Kerberos logon, with the MFP's target,
// account and budget behind the check's ledger, and what its failure
// means: the session step of a Kerberos-capable MFP, and the replay
// behind a server's NTLM refusal.
type kerberosReplay struct{ *checker }

// ntlmBlocked ends the session step of a server that refused the MFP's NTLM
// logon (STATUS_NTLM_BLOCKED): the same credentials over Kerberos tell
// whether the stored password is right. When they log on, the later steps
// run over that Kerberos session (what the MFP meets once it uses
// Kerberos); the verdict stays ntlm-blocked.
func (c kerberosReplay) ntlmBlocked(ctx context.Context, s *stepState) bool {
	defer c.skipWhy("not tried: the server refuses NTLM whatever the user name form", StepForms)
	start := time.Now()
	k := c.logon().Try(ctx)
	k.Evidence(s.Evidence)
	s.Evidence["kerberos_ms"] = time.Since(start).Milliseconds()
	fix := c.ntlmBlockedFix()
	switch {
	case k.Sess != nil:
		c.sess = k.Sess
		c.form = smbclient.StoredForm(c.t.User)
		c.fail(s, scanwarden.CauseNTLMBlocked, fmt.Sprintf("the server refuses NTLM (STATUS_NTLM_BLOCKED), which the MFP uses; the stored password is right: over Kerberos %s logs on (the steps below run over that Kerberos session)", k.Principal), fix)
		return true
	case k.Refused != nil:
		c.fail(s, scanwarden.CauseNTLMBlocked, fmt.Sprintf("the server refuses NTLM (STATUS_NTLM_BLOCKED), which the MFP uses; whether the stored password is right is not known: the Kerberos try was not sent (%s)", k.Refused.Reason), fix)
		return false
	}
	detail, kfix := c.failure(k)
	if k.Cause == scanwarden.CauseBadCredentials {
		c.also = append(c.also, k.Cause)
		c.fail(s, scanwarden.CauseNTLMBlocked, fmt.Sprintf("the server refuses NTLM (STATUS_NTLM_BLOCKED), which the MFP uses, and the stored password is wrong: over Kerberos %s", detail),
			"Two things to fix. The password: re-enter the destination's Login Password on the MFP (Command Center RX → Address Book) with the account's current password. And NTLM: "+fix)
		return false
	}
	if k.Cause != scanwarden.CauseKDCUnreachable && k.Cause != scanwarden.CauseUnknown && k.Cause != scanwarden.CauseKerberosNeedsName && k.Cause != scanwarden.CauseClockSkew {
		// An account state the admin must fix as well.
		c.also = append(c.also, k.Cause)
		fix = "Two things to fix. The account: " + kfix + " And NTLM: " + fix
	}
	c.fail(s, scanwarden.CauseNTLMBlocked, fmt.Sprintf("the server refuses NTLM (STATUS_NTLM_BLOCKED), which the MFP uses; over Kerberos: %s", detail), fix)
	return false
}

// ntlmBlockedFix names the two ways out, with this server's names.
func (c kerberosReplay) ntlmBlockedFix() string {
	name, nb := c.t.Host, c.t.Host
	if c.server != nil {
		if c.server.DNSComputer != "" {
			name = c.server.DNSComputer
		}
		if c.server.NetBIOSComputer != "" {
			nb = c.server.NetBIOSComputer
		}
	}
	return fmt.Sprintf("Either turn on Kerberos for SMB sending on the MFP if its firmware offers it (its Host Name must then be the server's DNS name, %s, and the MFP needs the domain's DNS and a right clock), or add %s to the domain's NTLM exceptions (Group Policy: Network security: Restrict NTLM: Add server exceptions in this domain, or the server's own Restrict NTLM: Incoming NTLM traffic policy).", name, nb)
}

// failure says what a failed Kerberos logon means and its fix.
func (c kerberosReplay) failure(k *smbclient.KerberosResult) (detail, fix string) {
	detail = k.Detail
	switch k.Cause {
	case scanwarden.CauseKerberosNeedsName:
		name := ""
		if c.server != nil && c.server.DNSComputer != "" {
			name = c.server.DNSComputer
		}
		if name != "" && !strings.EqualFold(name, c.t.Host) {
			detail = fmt.Sprintf("%s; the server calls itself %s", detail, name)
			fix = fmt.Sprintf("Enter %s (the server's DNS name, from its negotiate) as the destination's Host Name on the MFP instead of %s: Kerberos tickets are issued for names, not addresses.", name, c.t.Host)
		} else {
			fix = "Enter the server's full DNS name as the destination's Host Name on the MFP (the name its computer account has in the domain)."
		}
	case scanwarden.CauseClockSkew:
		if k.HasOffset {
			detail = fmt.Sprintf("%s; the KDC's clock is %+d s off this box's (Kerberos allows %d s)", detail, int64(k.Offset.Round(time.Second)/time.Second), int64(smbclient.MaxSkew/time.Second))
		}
		fix = "Set the MFP's clock right and give it an NTP server — the domain controller (Command Center RX → Device Settings → Date/Time → NTP Server); check this box's and the domain controller's clocks too."
	case scanwarden.CauseKDCUnreachable:
		fix = fmt.Sprintf("Give the MFP a DNS server that has the _kerberos SRV records of %s (the domain's DNS) and check that TCP/UDP 88 to a domain controller is open; or set scanwarden's [ad] host so it can find a KDC.", cmp.Or(k.Realm, "the realm"))
	default:
		fix = accountFix(c.account, c.t, k.Cause)
	}
	return detail, fix
}

// logon is the check's Kerberos logon (smbclient.KerberosLogon): its
// target, server, account and budget, behind its ledger.
func (c kerberosReplay) logon() smbclient.KerberosLogon {
	return smbclient.KerberosLogon{Account: c.logonAccount(), Budget: c.budget, Ledger: c.ledger, Window: c.o.Window,
		Addr: c.addr, Device: c.o.Device, Hints: smbclient.Kerberos{Realm: c.o.Realm, KDCs: c.o.KDCs},
		Resolver: c.o.Resolver, Timeout: c.o.StepTimeout, Now: c.o.Now, Logger: c.o.Logger, BeforeConnect: func() { c.settleFloor(true) }}
}
