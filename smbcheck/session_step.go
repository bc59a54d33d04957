package smbcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
)

// sessionStep logs on as the MFP stores the destination — the negotiate
// and ad steps taken inside the first logon, other user name forms when
// the password is refused, Kerberos for auth kerberos or auto — and, after
// a negotiate step that found an SMB1-only server, once more over SMB1.
type sessionStep struct{ *checker }

func (sessionStep) ids() []string { return []string{StepNegotiate, StepAD, StepSession, StepForms} }

func (c sessionStep) run(ctx context.Context) bool {
	return c.stepSession(ctx) || c.replaySMB1(ctx)
}

// replaySMB1 goes on over SMB1 after the negotiate step found a server that
// speaks only SMB1: the rest of the check is what an MFP with SMB1 enabled
// would meet. It reports whether the session step then succeeded.
func (c sessionStep) replaySMB1(ctx context.Context) bool {
	neg := c.r.Step(StepNegotiate)
	if c.smb1 || neg == nil || neg.Cause != scanwarden.CauseSMB1OnlyServer || c.r.Step(StepSession) != nil {
		return false
	}
	c.smb1 = true
	return c.stepSession(ctx)
}

func (c sessionStep) stepSession(ctx context.Context) bool {
	if c.t.LogonAuth() != scanwarden.AuthNTLM && !c.smb1 {
		return c.stepSessionKerberos(ctx)
	}
	return c.stepSessionNTLM(ctx, nil)
}

// stepSessionNTLM is the session step over NTLM. krbNote, when not nil,
// is auth auto's Kerberos try that could not judge the password.
func (c sessionStep) stepSessionNTLM(ctx context.Context, krbNote *smbclient.KerberosResult) bool {
	stored := smbclient.StoredForm(c.t.User)
	res := gatedLogon(c).attempt(ctx, c.conn, stored)
	c.conn = nil // handed over to the attempt
	if res.stopped {
		return false
	}
	if !c.negotiated {
		// The logon failed before the server's CHALLENGE: say why at the
		// negotiate layer first.
		if !c.explainNegotiation(ctx, res) {
			return false
		}
	}
	s := c.begin(StepSession)
	if !res.gateAt.IsZero() {
		s.start = res.gateAt // the logon proper: AUTHENTICATE to its answer
	}
	s.Evidence["workstation"] = c.t.WorkstationName()
	s.Evidence["form"] = formEvidence(stored)
	if c.negotiated {
		s.Evidence["budget"] = c.budget
	}
	switch {
	case c.smb1 && c.o.Device.NTLMv1:
		s.Evidence["protocol"] = "SMB1 (NT LM 0.12), NTLMv1"
	case c.smb1:
		s.Evidence["protocol"] = "SMB1 (NT LM 0.12), NTLMv2"
	case c.o.Device.NTLMv1 && c.t.LogonAuth() == scanwarden.AuthNTLM:
		s.Evidence["protocol"] = "SMB " + c.dialect() + ", NTLMv1"
	}
	if krbNote != nil {
		// auth auto: Kerberos could not judge the password, NTLM follows.
		s.Evidence["auth"] = string(scanwarden.AuthAuto) + ": Kerberos, then NTLM"
		krbNote.Evidence(s.Evidence)
	}
	switch {
	case res.sess != nil:
		c.sess, c.form = res.sess, stored
		if !c.sessionGuest(s, res) {
			c.ok(s, fmt.Sprintf("logged on as %s", describeForm(stored)))
		}
		if c.anonymous() {
			c.skipWhy("not needed: the anonymous logon succeeded", StepForms)
		} else {
			c.skipWhy("not needed: the stored user name logged on", StepForms)
		}
		return true
	case res.refused != nil:
		c.refused(s, res.refused)
		c.skipWhy("not run: nothing more may be replayed now", StepForms)
		return false
	}
	for k, v := range res.ev {
		s.Evidence[k] = v
	}
	if c.sessionAnonymousRefused(s, res) || c.ntlmv1Refused(ctx, s, res) || c.encryptionRefusedAtLogon(ctx, s, res) {
		return false
	}
	if res.status == ntstatus.NTLMBlocked && krbNote == nil && !c.smb1 {
		return kerberosReplay(c).ntlmBlocked(ctx, s)
	}
	if res.status.IsLogonFailure() {
		// The forms step names the cause: another form may work.
		c.end(s, StatusFail, fmt.Sprintf("the server refused %s: %s", describeForm(stored), res.status))
		return c.stepForms(ctx)
	}
	cause := res.cause
	detail := fmt.Sprintf("logon as %s failed: %s", describeForm(stored), errText(res))
	c.fail(s, cause, detail, accountFix(c.account, c.t, cause))
	c.skipWhy("not tried: this failure is not about how the user name is written", StepForms)
	return false
}

// explainNegotiation records the negotiate (and ad) step for a first logon
// that failed before the server's CHALLENGE. It reports whether the session
// step should follow (the failure then belongs to it).
func (c sessionStep) explainNegotiation(ctx context.Context, res attemptResult) bool {
	if res.info != nil {
		// The server negotiated and then refused the session setup.
		if !gatedLogon(c).afterNegotiate(ctx, res.info, time.Now()) {
			return false
		}
		return true
	}
	if c.o.Device.SMB1Only {
		// The probe already said SMB1 is accepted; the session step
		// explains the rest.
		return true
	}
	if res.err != nil && smbclient.IsTimeout(res.err) {
		s := c.begin(StepNegotiate)
		c.negotiated = true
		_, ev := classify(StepNegotiate, res.err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		negotiateStep(c).negotiateTimeout(ctx, s)
		return false
	}
	// One extra connection: why did SMB2 negotiation fail?
	negotiateStep(c).stepProbe(ctx, res.err)
	return false
}

// accountFix dates an account cause's fix from the directory's account
// (nil: not known), for the MFP of destination t.
func accountFix(acct *smbclient.Account, t scanwarden.Target, cause scanwarden.Cause) string {
	if acct != nil && acct.Cause == cause && acct.Fix != "" {
		return acct.Fix
	}
	if cause == scanwarden.CauseWorkstationRestricted {
		return fmt.Sprintf("Add %s (the MFP's NetBIOS name) to the account's 'Log On To' workstations, or remove the restriction.", t.WorkstationName())
	}
	return ""
}

func (c sessionStep) refused(s *stepState, r *smbclient.Refusal) {
	s.Evidence["not_replayed"] = r.Reason
	if !r.RetryAt.IsZero() {
		s.Evidence["retry_after"] = r.RetryAt.Format(time.RFC3339)
	}
	if r.Last != nil && r.Last.Cause != "" {
		s.Evidence["last_result"] = fmt.Sprintf("%s at %s (%s, as %s)", r.Last.Cause, r.Last.At.Format(time.RFC3339), r.Last.Status, r.Last.Typed)
		c.ledgerHit = r.Last
		retry := ""
		if !r.RetryAt.IsZero() {
			retry = fmt.Sprintf("; next replay after %s", r.RetryAt.Format("15:04"))
		}
		c.fail(s, r.Last.Cause, fmt.Sprintf("not replayed (%s); last result %s at %s%s", r.Reason, r.Last.Cause, r.Last.At.Format("15:04"), retry), "")
		return
	}
	c.fail(s, scanwarden.CauseUnknown, fmt.Sprintf("not replayed: %s", r.Reason),
		"Nothing was replayed to protect the account from a lockout; check the account in the directory, or wait and check again.")
}

func (c sessionStep) stepForms(ctx context.Context) bool {
	s := c.begin(StepForms)
	h := formHints{}
	if c.server != nil {
		h.NetBIOSDomain, h.DNSDomain, h.ServerName = c.server.NetBIOSDomain, c.server.DNSDomain, c.server.NetBIOSComputer
	}
	if c.account != nil && c.account.Found {
		h = formHints{NetBIOSDomain: c.account.NetBIOSDomain, DNSDomain: c.account.DNSDomain, SAM: c.account.SAM, UPN: c.account.UPN}
	}
	forms := candidateForms(c.t.User, h)
	var tried, failed []string
	var notTried []string
	for i, f := range forms {
		res := gatedLogon(c).attempt(ctx, nil, f)
		if res.refused != nil {
			for _, g := range forms[i:] {
				notTried = append(notTried, g.Typed)
			}
			s.Evidence["not_tried"] = notTried
			s.Evidence["not_replayed"] = res.refused.Reason
			break
		}
		tried = append(tried, f.Typed)
		if res.sess != nil {
			c.sess, c.form = res.sess, f
			wf := f
			c.r.WorkingForm = &wf
			s.Evidence["tried"] = tried
			s.Evidence["working_form"] = formEvidence(f)
			c.fail(s, scanwarden.CauseWrongUserFormat, fmt.Sprintf("the password is right, but the server refuses the user name as typed (%s) and accepts it as %s", c.t.User, f.Typed),
				fmt.Sprintf("On the MFP (Command Center RX → Address Book → the destination → Login User Name), type %s instead of %s.", f.Typed, c.t.User))
			// The check goes on with the working session.
			return true
		}
		failed = append(failed, fmt.Sprintf("%s: %s", f.Typed, errText(res)))
		if res.cause == scanwarden.CauseAccountLocked {
			s.Evidence["tried"] = tried
			s.Evidence["failed"] = failed
			c.fail(s, scanwarden.CauseAccountLocked, "the account is locked out; no further form is tried", "")
			return false
		}
	}
	s.Evidence["tried"] = tried
	s.Evidence["failed"] = failed
	detail := "no user name form was accepted: the password is wrong (or the account is unknown)"
	if c.account != nil && c.account.Found {
		// The directory knows the account: only the password is left.
		detail = "no user name form was accepted: the password is wrong"
	}
	if len(tried) == 0 {
		detail = fmt.Sprintf("the server refused %s (a wrong password, or no such account); no other user name form was tried: %v", c.t.User, s.Evidence["not_replayed"])
	} else if len(notTried) > 0 {
		detail += fmt.Sprintf("; %d form(s) not tried to protect the account from a lockout", len(notTried))
	}
	detail, fix := c.blankPassword(s, detail)
	c.fail(s, scanwarden.CauseBadCredentials, detail, fix)
	return false
}

// dialect is the SMB dialect the server negotiated ("2/3" before it did).
func (c sessionStep) dialect() string {
	if c.server != nil && c.server.Dialect != "" {
		return c.server.Dialect
	}
	return "2/3"
}

func formEvidence(f smbclient.Form) map[string]string {
	return map[string]string{"typed": f.Typed, "ntlm_user": f.User, "ntlm_domain": f.Domain, "kind": string(f.Kind)}
}

func describeForm(f smbclient.Form) string {
	if f.User == "" && f.Domain == "" {
		return "an empty login name (anonymous)"
	}
	if f.Domain == "" {
		return fmt.Sprintf("%s (NTLM user %s, no domain)", f.Typed, f.User)
	}
	return fmt.Sprintf("%s (NTLM user %s, domain %s)", f.Typed, f.User, f.Domain)
}

func errText(res attemptResult) string {
	if res.status != 0 {
		return res.status.String()
	}
	if res.err != nil {
		return res.err.Error()
	}
	return string(res.cause)
}

// blankPassword words a refused logon whose stored password is empty.
func (c sessionStep) blankPassword(s *stepState, detail string) (string, string) {
	if c.anonymous() || !c.t.Password.IsZero() {
		return detail, ""
	}
	s.Evidence["password"] = "empty"
	return detail + "; the destination's Login Password is empty, and the server refuses the account without a password",
		fmt.Sprintf("Enter the account's password in the destination's Login Password on the MFP (Command Center RX → Address Book); a server does not accept %s with an empty password (Windows refuses blank passwords over the network by default).", c.t.User)
}

// sessionGuest ends the session step when the logon succeeded for an empty
// login or as guest; it reports false when the session is not one of these.
func (c sessionStep) sessionGuest(s *stepState, res attemptResult) bool {
	switch {
	case c.anonymous():
		s.Evidence["anonymous"] = true
		if res.sess.Guest() {
			s.Evidence["guest"] = true
		}
		c.warnAction(s, "the server accepted an anonymous session (empty login name and password, as the MFP sends them)"+c.signingNote(),
			"the destination has no login: it depends on the server's guest access, which Windows 11 24H2, Windows Server 2025 and NAS updates turn off — give the MFP an account")
		return true
	case res.sess.Guest():
		s.Evidence["guest"] = true
		s.Evidence["mapped_to_guest"] = true
		c.warnAction(s, fmt.Sprintf("the server does not know the account %s: it logged it on as guest without checking the password (map to guest)%s", c.t.User, c.signingNote()),
			fmt.Sprintf("the server does not know the account %s and lets the MFP in as guest: correct the Login User Name on the MFP or create the account on %s", c.t.User, c.t.Host))
		return true
	}
	return false
}

// sessionAnonymousRefused ends the session step when the server refused an
// anonymous logon; it reports false when the logon was not anonymous.
func (c sessionStep) sessionAnonymousRefused(s *stepState, res attemptResult) bool {
	if !c.anonymous() || !(res.status.IsLogonFailure() || res.status == ntstatus.AccessDenied) {
		return false
	}
	s.Evidence["anonymous"] = true
	c.fail(s, scanwarden.CauseGuestRefused, fmt.Sprintf("the server refuses an anonymous logon (empty login name and password, as the MFP sends them): %s%s", res.status, c.signingNote()),
		c.guestWaysOut(c.t.Share))
	c.skipWhy("not tried: an empty login name has no other form", StepForms)
	return true
}

// encryptionRefusedAtLogon tells, for an MFP that cannot encrypt, a server
// that requires SMB3 encryption of every session (Samba: server smb
// encrypt = required in [global]; Windows: Set-SmbServerConfiguration
// -EncryptData with RejectUnencryptedAccess) and so refuses the session
// setup itself with ACCESS_DENIED — after the password was checked, so a
// wrong one is not behind it. scanwarden's own client (which encrypts)
// logs on once more and connects the share. It ends the session step when
// that client was let in and asked to encrypt, and reports whether it did.
func (c sessionStep) encryptionRefusedAtLogon(ctx context.Context, s *stepState, res attemptResult) bool {
	d := c.o.Device
	if g := gatedLogon(c); c.anonymous() || res.status != ntstatus.AccessDenied || !g.cannotEncrypt() || !g.ownClientAskedToEncrypt(ctx, smbclient.StoredForm(c.t.User)) {
		return false
	}
	s.Evidence["encryption"] = "required for every session: scanwarden's own client is let in and asked to encrypt"
	s.Evidence["device_encrypts"] = false
	why := "the MFP cannot encrypt"
	if d.MaxDialect != 0 && d.MaxDialect < DialectSMB30 {
		why = fmt.Sprintf("the MFP's highest dialect, SMB %s, has no encryption", d.MaxDialect)
	}
	c.fail(s, scanwarden.CauseEncryptionRequired, fmt.Sprintf("server %s requires SMB3 encryption of every session and %s: it refuses the MFP's logon (%s)", c.t.Host, why, res.status),
		fmt.Sprintf("Stop requiring encryption server-wide on %s (Windows: Set-SmbServerConfiguration -EncryptData $false, or -RejectUnencryptedAccess $false; Samba: server smb encrypt = desired in [global]), or update the MFP to firmware whose SMB client encrypts (SMB 3); or let the MFP scan to scanwarden's fallback share, whose forwarder encrypts.", c.t.Host))
	c.skipWhy("not tried: this failure is not about how the user name is written", StepForms)
	return true
}

// ntlmv1Refused tells, for an MFP that logs on with NTLMv1 (over SMB1 or
// SMB2/3), a server that refuses NTLMv1 from a wrong password: after a
// plain logon failure it replays the same name and password once with
// NTLMv2, within the budget. It ends the session step when NTLMv2 is
// accepted and reports whether it did.
func (c sessionStep) ntlmv1Refused(ctx context.Context, s *stepState, res attemptResult) bool {
	if !c.o.Device.NTLMv1 || c.anonymous() || !res.status.IsLogonFailure() {
		return false
	}
	c.ntlmv2 = true
	v2 := gatedLogon(c).attempt(ctx, nil, smbclient.StoredForm(c.t.User))
	c.ntlmv2 = false
	switch {
	case v2.sess != nil && !c.smb1:
		v2.sess.Close()
		s.Evidence["ntlmv1"] = res.status.String()
		s.Evidence["ntlmv2"] = "accepted"
		c.fail(s, scanwarden.CauseNTLMv1Refused, fmt.Sprintf("the server refuses the MFP's NTLMv1 logon over SMB %s (%s), and accepts the same user name and password with NTLMv2", c.dialect(), res.status),
			"Switch the MFP's SMB client to NTLMv2 (Command Center RX → Network Settings → Protocol → SMB Client; older firmware needs an update for it). Only as a stop-gap allow NTLMv1 where the password is checked — the file server (Samba: ntlm auth = ntlmv1-permitted; Windows: LmCompatibilityLevel 4 or lower) and, for a domain account, every domain controller — which weakens every account's password protection.")
		c.skipWhy("not tried: the password is right, the server refuses NTLMv1", StepForms)
		return true
	case v2.sess != nil:
		v2.sess.Close()
		s.Evidence["ntlmv1"] = res.status.String()
		s.Evidence["ntlmv2"] = "accepted"
		c.fail(s, scanwarden.CauseSMB1Refused, fmt.Sprintf("the server refuses the MFP's NTLMv1 logon (%s), and accepts the same user name and password with NTLMv2", res.status),
			"Switch the MFP to NTLMv2 (a firmware update may be needed), or better to SMB2/SMB3; only as a stop-gap allow NTLMv1 on the server (Samba: ntlm auth = ntlmv1-permitted; Windows: LmCompatibilityLevel 4 or lower), which weakens every account's password protection.")
		c.skipWhy("not tried: the password is right, the server refuses NTLMv1", StepForms)
		return true
	case v2.refused != nil:
		s.Evidence["ntlmv2"] = "not replayed: " + v2.refused.Reason
	default:
		s.Evidence["ntlmv2"] = errText(v2)
	}
	return false
}
