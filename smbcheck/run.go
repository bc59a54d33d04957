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
	"github.com/scanwarden/scanwarden/smbconn"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/internal/smbwire"
)

// checker carries one check's state.
type checker struct {
	t Target
	o Options
	r Report

	addr      string              // the address the MFP would connect to
	conn      net.Conn            // the tcp step's connection, used for the first logon
	server    *smbconn.ServerInfo // what the server told in negotiate (or the probe)
	account   *Account            // from the directory
	host      *Host               // the target's computer object, from the directory
	sess      *smbconn.Conn       // the one session
	form      Form                // the form that logged on
	ledger    Ledger              // o.Ledger or a per-check memory ledger
	budget    int                 // failed logons allowed in this window
	firstFx   *verdictNote        // the first failure's specific summary and fix
	ledgerHit *LedgerEntry        // last observation used instead of a replay
	// negotiated is set once the negotiate step is recorded.
	negotiated bool
	// smb1 replays the logon and what follows over SMB1: the MFP speaks
	// only SMB1, or the server does.
	smb1 bool
	// ntlmv2 logs an NTLMv1 device on with NTLMv2 (see ntlmv1Refused).
	ntlmv2 bool
	// warnings are what an ok verdict must still say: things that need
	// an admin's action (not information such as the dialect).
	warnings []string
	// also are causes a step found besides its own (the Kerberos replay
	// behind an NTLM refusal): the verdict lists them.
	also []Cause
	// probing makes the next attempt's gate end the logon once the
	// negotiate and ad steps are taken: nothing is sent that could fail.
	probing bool
	// krbNote is the Kerberos try of auth auto before its NTLM fallback.
	krbNote *krbResult
}

type verdictNote struct {
	cause   Cause
	summary string
	fix     string
}

// Run checks one destination. It always returns a Report: a check that
// finds a problem has run fine.
func Run(ctx context.Context, t Target, o Options) Report {
	devErr := deviceFits(t, o.Device)
	o.defaults()
	c := &checker{t: t, o: o, r: Report{Target: t.Info(), Started: o.Now()}}
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

func (c *checker) run(ctx context.Context) {
	defer c.noteSMB1Replay()
	addrs := c.stepName(ctx)
	if addrs == nil {
		c.skip(StepTCP, StepNegotiate, StepAD, StepSession, StepForms, StepTree, StepPath, StepWrite, StepACL)
		return
	}
	if !c.stepTCP(ctx, addrs) {
		c.skip(StepNegotiate, StepAD, StepSession, StepForms, StepTree, StepPath, StepWrite, StepACL)
		return
	}
	if c.o.Device.SMB1Only {
		// The MFP offers only SMB1: ask the server the same way first,
		// then replay over SMB1.
		if !c.stepProbe(ctx, nil) {
			c.skip(StepAD, StepSession, StepForms, StepTree, StepPath, StepWrite, StepACL)
			return
		}
		c.smb1 = true
	}
	// The negotiate and ad steps are taken inside the first logon, right
	// before its AUTHENTICATE would leave (see attempt).
	if !c.stepSession(ctx) && !c.replaySMB1(ctx) {
		c.skip(StepNegotiate, StepAD, StepSession, StepForms, StepTree, StepPath, StepWrite, StepACL)
		return
	}
	share, ok := c.stepTree(ctx)
	if !ok {
		c.skip(StepPath, StepWrite, StepACL)
		return
	}
	if !c.stepPath(ctx, share) {
		c.skip(StepWrite, StepACL)
		return
	}
	c.stepWrite(ctx, share)
	c.stepACL(ctx, share)
}

// replaySMB1 goes on over SMB1 after the negotiate step found a server that
// speaks only SMB1: the rest of the check is what an MFP with SMB1 enabled
// would meet. It reports whether the session step then succeeded.
func (c *checker) replaySMB1(ctx context.Context) bool {
	neg := c.r.Step(StepNegotiate)
	if c.smb1 || neg == nil || neg.Cause != CauseSMB1OnlyServer || c.r.Step(StepSession) != nil {
		return false
	}
	c.smb1 = true
	return c.stepSession(ctx)
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

type stepState struct {
	Step
	start time.Time
}

func (c *checker) begin(id string) *stepState {
	return &stepState{Step: Step{ID: id, Evidence: Evidence{}}, start: time.Now()}
}

func (c *checker) end(s *stepState, st Status, detail string) {
	s.Status, s.Detail = st, detail
	s.Duration = time.Since(s.start)
	c.r.Steps = append(c.r.Steps, s.Step)
	if c.o.Progress != nil {
		c.o.Progress(s.Step)
	}
}

func (c *checker) ok(s *stepState, detail string)   { c.end(s, StatusOK, detail) }
func (c *checker) warn(s *stepState, detail string) { c.end(s, StatusWarn, detail) }

// fail ends a step with a cause; summary and fix, when given, refine the
// cause's generic ones for the verdict.
func (c *checker) fail(s *stepState, cause Cause, detail, fix string) {
	s.Cause = cause
	if c.firstFx == nil {
		c.firstFx = &verdictNote{cause: cause, summary: detail, fix: fix}
	}
	c.end(s, StatusFail, detail)
}

func (c *checker) skip(ids ...string) { c.skipWhy("not run: an earlier step failed", ids...) }

func (c *checker) skipWhy(why string, ids ...string) {
	for _, id := range ids {
		if (id == StepAD || id == StepACL) && c.o.Directory == nil {
			continue
		}
		if c.r.Step(id) != nil {
			continue
		}
		s := c.begin(id)
		s.Duration = 0
		c.end(s, StatusSkipped, why)
	}
}

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

// warnAction ends a step with a warning that needs an admin's action; the
// verdict repeats it even when the destination works.
func (c *checker) warnAction(s *stepState, detail, action string) {
	c.warnings = append(c.warnings, action)
	c.warn(s, detail)
}

func (c *checker) cleanup() {
	if c.sess != nil {
		c.sess.Close()
	}
	if c.conn != nil {
		c.conn.Close()
	}
}

// --- tcp ---------------------------------------------------------------

func (c *checker) stepTCP(ctx context.Context, addrs []string) bool {
	s := c.begin(StepTCP)
	port := c.t.port()
	c.addr = addrs[0]
	s.Evidence["address"] = c.addr
	s.Evidence["port"] = port
	dctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	conn, err := smbconn.DialTCP(dctx, c.addr, port)
	cancel()
	if err == nil {
		c.conn = conn
		c.ok(s, fmt.Sprintf("connected to %s port %d", c.addr, port))
		return true
	}
	cause, ev := classify(StepTCP, err)
	for k, v := range ev {
		s.Evidence[k] = v
	}
	// One extra connection: is the other SMB port open?
	other := 445
	if port == 445 {
		other = 139
	}
	octx, ocancel := context.WithTimeout(ctx, c.o.StepTimeout/2)
	oc, oerr := smbconn.DialTCP(octx, c.addr, other)
	ocancel()
	fix := ""
	if oerr == nil {
		oc.Close()
		s.Evidence[fmt.Sprintf("port_%d", other)] = "open"
		fix = fmt.Sprintf("The server answers on port %d, not %d: set the destination's Port Number to %d on the MFP, or open port %d on the server.", other, port, other, port)
	} else {
		s.Evidence[fmt.Sprintf("port_%d", other)] = describeDialError(oerr)
	}
	if cause == CauseUnknown {
		cause = CauseHostUnreachable
	}
	c.fail(s, cause, fmt.Sprintf("%s port %d: %s", c.addr, port, describeDialError(err)), fix)
	return false
}

func describeDialError(err error) string {
	switch {
	case isTimeout(err):
		return "no answer (timeout: host down or a firewall drops the traffic)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (the host is up, nothing listens)"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	}
	return err.Error()
}

// --- negotiate -----------------------------------------------------------

// stepProbe is the negotiate step by the hand-written probe on one extra
// connection: for an SMB1-only MFP (SMB1 offered alone), and to explain a
// logon whose SMB2 negotiation failed (SMB1-only server, not SMB at all).
// cause is the SMB library's error when the probe explains one.
func (c *checker) stepProbe(ctx context.Context, cause error) bool {
	s := c.begin(StepNegotiate)
	c.negotiated = true
	pctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	conn, err := smbconn.DialTCP(pctx, c.addr, c.t.port())
	var si *smbconn.ServerInfo
	if err == nil {
		si, err = smbconn.Probe(pctx, conn, c.t.port(), c.t.Host, c.o.Device.SMB1Only)
		conn.Close()
	}
	if err != nil {
		if errors.Is(err, smbwire.ErrNoSMB1) {
			s.Evidence["smb1"] = false
			s.Evidence["error"] = err.Error()
			if !slices.Contains(smbPorts, c.t.port()) {
				if answers := c.huntSMB(ctx); smbElsewhere(answers) {
					c.failNotSMB(ctx, s, "it hangs up on the SMB negotiate", answers)
					return false
				}
			}
			c.fail(s, CauseSMB1Refused, "the MFP speaks SMB1 only and the server refuses SMB1", "")
			return false
		}
		failed, ev := classify(StepNegotiate, err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		if errors.Is(err, smbwire.ErrNotSMB) {
			how := "it answers in another protocol"
			if smbwire.IsPeerClose(err) {
				how = "it hangs up on the SMB negotiate"
			}
			c.failNotSMB(ctx, s, how, nil)
			return false
		}
		if failed == CauseTimeout {
			c.negotiateTimeout(ctx, s)
			return false
		}
		c.fail(s, failed, "SMB negotiation failed: "+err.Error(), "")
		return false
	}
	c.server = si
	if !si.SMB2 && !c.o.Device.SMB1Only {
		c.negotiateEvidence(s, si)
		c.fail(s, CauseSMB1OnlyServer, fmt.Sprintf("the server offers only SMB1 (%s): an MFP using SMB2/3 cannot connect; the steps below replay the destination over SMB1, as an MFP with SMB1 enabled would", si.Dialect), "")
		return false
	}
	if cause != nil {
		// The probe saw a working SMB2 server, yet the library failed.
		c.negotiateEvidence(s, si)
		_, ev := classify(StepNegotiate, cause)
		for k, v := range ev {
			s.Evidence["library_"+k] = v
		}
		c.fail(s, CauseUnknown, "the server negotiates SMB2 with a raw probe, but the SMB library's negotiation failed: "+cause.Error(), "")
		return false
	}
	return c.judgeNegotiate(s, si)
}

func (c *checker) negotiateEvidence(s *stepState, si *smbconn.ServerInfo) {
	s.Evidence["smb2"] = si.SMB2
	if si.SMB1 || c.o.Device.SMB1Only {
		s.Evidence["smb1"] = si.SMB1
	}
	s.Evidence["dialect"] = si.Dialect
	s.Evidence["signing_required"] = si.SigningRequired
	for k, v := range map[string]string{"netbios_computer": si.NetBIOSComputer, "netbios_domain": si.NetBIOSDomain,
		"dns_computer": si.DNSComputer, "dns_domain": si.DNSDomain, "os_version": si.OSVersion, "windows": si.Windows} {
		if v != "" {
			s.Evidence[k] = v
		}
	}
}

// judgeNegotiate ends the negotiate step from what the server told:
// signing, Windows edition, the MFP's own limits.
func (c *checker) judgeNegotiate(s *stepState, si *smbconn.ServerInfo) bool {
	c.negotiateEvidence(s, si)
	var warns []string
	what := fmt.Sprintf("SMB %s", si.Dialect)
	if si.NetBIOSComputer != "" {
		what += fmt.Sprintf(", server %s in %s", si.NetBIOSComputer, si.NetBIOSDomain)
	}
	if si.Windows != "" {
		what += ", " + si.Windows
	}
	if lowest := c.o.Device.MinDialect; lowest > DialectSMB1 && si.SMB2 && !c.smb1 {
		if d, err := ParseDialect(si.Dialect); err == nil && d != 0 && d < lowest {
			c.fail(s, CauseUnknown, fmt.Sprintf("the server's highest dialect is SMB %s, below the MFP's lowest (%s): the MFP cannot connect", si.Dialect, lowest),
				fmt.Sprintf("Enable SMB %s or later on the server, or a lower dialect on the MFP.", lowest))
			return false
		}
	}
	if si.SigningRequired {
		if c.o.Device.NoSigning {
			c.fail(s, CauseSigningRequired, "the server requires SMB signing and the MFP cannot sign", "")
			return false
		}
		// Information: an MFP that cannot sign is told with --device-no-signing.
		what += ", signing required"
	}
	if si.ClientEdition {
		warns = append(warns, fmt.Sprintf("%s allows only 20 inbound SMB sessions: many MFPs and PCs connecting can exhaust it (lower AutoDisconnect, or move the folder to a server)", si.Windows))
	}
	if c.o.Device.SMB1Only {
		warns = append(warns, "the MFP uses SMB1, an unsafe protocol (update its firmware and use SMB2/3 when possible); the steps below replay it over SMB1 with an NTLMv2 logon (firmware that sends only NTLMv1 is refused by servers that require NTLMv2, as Samba does by default)")
	}
	if len(warns) > 0 {
		c.warnAction(s, what+"; "+strings.Join(warns, "; "), strings.Join(warns, "; "))
	} else {
		c.ok(s, what)
	}
	return true
}

// afterNegotiate records the negotiate step from what the first logon's
// server told, then the ad step; it runs inside that logon, before its
// AUTHENTICATE leaves. It reports whether the check may go on.
func (c *checker) afterNegotiate(ctx context.Context, si *smbconn.ServerInfo, started time.Time) bool {
	if !c.negotiated {
		c.negotiated = true
		c.server = si
		s := c.begin(StepNegotiate)
		s.start = started
		if !c.judgeNegotiate(s, si) {
			return false
		}
	}
	if c.o.Directory != nil && c.r.Step(StepAD) == nil {
		return c.stepAD(ctx)
	}
	return true
}

// --- ad ------------------------------------------------------------------

func (c *checker) stepAD(ctx context.Context) bool {
	s := c.begin(StepAD)
	actx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	hostWarn, err := c.adHost(actx, s)
	if err != nil {
		s.Evidence["error"] = err.Error()
		c.warnAction(s, "Active Directory could not be asked ("+err.Error()+"); the check goes on without it", "Active Directory could not be asked")
		return true
	}
	if local, why := c.localAccount(); local {
		s.Evidence["account"] = "local to the server"
		c.adEnd(s, why+": the directory is not asked about it", hostWarn)
		return true
	}
	acct, err := c.o.Directory.Account(actx, c.t.User, c.t.workstation())
	if err != nil {
		s.Evidence["error"] = err.Error()
		c.warnAction(s, "Active Directory could not be asked ("+err.Error()+"); the check goes on without it", "Active Directory could not be asked")
		return true
	}
	for k, v := range acct.Evidence {
		s.Evidence[k] = v
	}
	if c.foreignDirectory(acct) {
		c.adEnd(s, fmt.Sprintf("the server belongs to domain %s, the directory is %s: its answer about the account does not apply", c.server.NetBIOSDomain, acct.NetBIOSDomain), hostWarn)
		return true
	}
	c.account = acct
	if !acct.Found {
		c.fail(s, CauseUnknownUser, fmt.Sprintf("the directory has no account %s", c.t.User), acct.Fix)
		return false
	}
	s.Evidence["budget"] = acct.Budget
	acct.foresight(s.Evidence)
	if acct.Cause != CauseOK && acct.Cause != "" && acct.Certain {
		c.fail(s, acct.Cause, acct.Summary, acct.Fix)
		return false
	}
	detail := fmt.Sprintf("account %s (%s) can log on", acct.SAM, acct.UPN)
	if acct.Summary != "" {
		detail = acct.Summary
	}
	c.adEnd(s, detail, hostWarn)
	return true
}

func (c *checker) adEnd(s *stepState, detail string, hostWarn []string) {
	if len(hostWarn) > 0 {
		c.warnAction(s, detail+"; "+strings.Join(hostWarn, "; "), strings.Join(hostWarn, "; "))
		return
	}
	c.ok(s, detail)
}

// adHost looks up the target's computer object — by the name the MFP
// stores or the server's own NetBIOS name, in one question — and returns
// its warnings.
func (c *checker) adHost(ctx context.Context, s *stepState) ([]string, error) {
	var aliases []string
	if c.server != nil && c.server.NetBIOSComputer != "" {
		aliases = append(aliases, c.server.NetBIOSComputer)
	}
	h, err := c.o.Directory.Host(ctx, strings.Trim(c.t.Host, "[]"), aliases...)
	if err != nil {
		return nil, err
	}
	if h == nil || !h.Found {
		s.Evidence["host"] = "no computer object"
		return nil, nil
	}
	c.host = h
	s.Evidence["host"] = h.Name
	if h.DomainController {
		s.Evidence["host_dc"] = true
	}
	s.Evidence["host_os"] = strings.TrimSpace(h.OS + " " + h.OSVersion)
	return h.Warnings, nil
}

// localAccount tells when the account the MFP uses is local to the server,
// so that the directory has nothing to say about it. A domain controller has
// no local accounts: there .\user and HOST\user are the domain's.
func (c *checker) localAccount() (bool, string) {
	si := c.server
	if si == nil || si.NetBIOSComputer == "" || (c.host != nil && c.host.DomainController) {
		return false, ""
	}
	if d, _, ok := strings.Cut(c.t.User, `\`); ok && (d == "." || strings.EqualFold(d, si.NetBIOSComputer)) {
		return true, fmt.Sprintf(`the user name %s names an account local to %s`, c.t.User, si.NetBIOSComputer)
	}
	if !si.DomainJoined() {
		return true, fmt.Sprintf("%s is in no domain (its NTLM domain is its own name), so %s is one of its local accounts", si.NetBIOSComputer, c.t.User)
	}
	return false, ""
}

// foreignDirectory reports whether the directory that found acct is another
// domain's than the server's: its answer about the account does not apply.
func (c *checker) foreignDirectory(acct *Account) bool {
	return acct.Found && c.server != nil && c.server.DomainJoined() && acct.NetBIOSDomain != "" && !strings.EqualFold(acct.NetBIOSDomain, c.server.NetBIOSDomain)
}

// useAccount makes acct (a delivery's lookup, DialOptions.Accounts) the
// checker's account where the ad step would: not for an account local to
// the server, not from another domain's directory; then the budget follows
// it, as in a check.
func (c *checker) useAccount(acct *Account) {
	if local, _ := c.localAccount(); acct != nil && !local && !c.foreignDirectory(acct) {
		c.account = acct
	}
	c.computeBudget()
}

// --- session and forms -----------------------------------------------------

// accountKey names the account for the ledger.
func (c *checker) accountKey() string {
	user, _ := baseUser(c.t.User)
	authority := c.t.Host
	if c.account != nil && c.account.Found {
		return AccountKey(c.account.NetBIOSDomain, c.account.SAM)
	}
	if c.server != nil && c.server.NetBIOSDomain != "" {
		authority = c.server.NetBIOSDomain
	}
	return AccountKey(authority, user)
}

// accountSeen is the directory's view of the account for the ledger (nil
// without a directory, or when it found no account).
func (c *checker) accountSeen() *AccountSeen {
	if c.account == nil || !c.account.Found {
		return nil
	}
	return &AccountSeen{State: c.account.Cause, PasswordLastSet: c.account.PasswordLastSet,
		DCBudget: c.account.Budget >= 0 && c.account.Budget <= c.o.MaxFailures}
}

func (c *checker) computeBudget() {
	c.budget = c.o.MaxFailures
	if c.account != nil && c.account.Found && c.account.Budget >= 0 && c.account.Budget < c.budget {
		c.budget = c.account.Budget
	}
}

type attemptResult struct {
	gateAt  time.Time // when the AUTHENTICATE was let go (zero: never)
	sess    *smbconn.Conn
	info    *smbconn.ServerInfo // what the server told (nil: it did not negotiate)
	refused *Refusal            // the ledger kept the logon back
	stopped bool                // the negotiate or ad step ended the check
	probed  bool                // a probe: the gate ended the logon on purpose
	cause   Cause
	status  ntstatus.Status
	err     error
	ev      Evidence // the classified error's evidence
}

// errStopped closes the gate when the negotiate or ad step failed.
var errStopped = errors.New("check stopped before the logon")

// errProbed closes the gate of a probe (see checker.probing).
var errProbed = errors.New("negotiate only: no logon sent")

// attempt sends one logon with form. conn may be nil: then a fresh
// connection is dialed (and closed on failure). The failure ledger is asked
// at the last moment, right before the AUTHENTICATE would leave; on the
// first logon, the negotiate and ad steps are taken there too.
func (c *checker) attempt(ctx context.Context, conn net.Conn, f Form) attemptResult {
	started := time.Now()
	// The logon has StepTimeout to answer; the time the gate spends (the
	// directory, the ledger) does not count against it.
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(c.o.StepTimeout, func() { cancel(os.ErrDeadlineExceeded) })
	defer timer.Stop()
	if conn == nil {
		var err error
		conn, err = smbconn.DialTCP(lctx, c.addr, c.t.port())
		if err != nil {
			return attemptResult{err: err, cause: CauseHostUnreachable}
		}
	}
	var res attemptResult
	var id int64
	g := c.logonGate(ctx, f, started, timer, &res, &id)
	var sess *smbconn.Conn
	var info *smbconn.ServerInfo
	var err error
	if c.smb1 {
		sess, info, err = smbconn.LogonSMB1(lctx, conn, c.t.port(), c.t.Host, credentials(f, c.t), c.o.Device.NTLMv1 && !c.ntlmv2, g)
	} else {
		sess, info, err = smbconn.Logon(lctx, conn, c.t.port(), c.t.Host, credentials(f, c.t), c.o.Device, g)
	}
	if err != nil && errors.Is(context.Cause(lctx), os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: no answer within %s: %w", err, c.o.StepTimeout, os.ErrDeadlineExceeded)
	}
	res.info = info
	rctx := context.WithoutCancel(ctx)
	if err == nil {
		if rerr := c.ledger.Resolve(rctx, id, Outcome{Kind: Succeeded}); rerr != nil {
			c.o.Logger.Warn("failure ledger", "err", rerr)
		}
		res.sess = sess
		return res
	}
	conn.Close()
	res.err = err
	if res.stopped || res.refused != nil || res.probed {
		return res
	}
	c.judgeAttempt(ctx, id, &res)
	return res
}

// logonGate is attempt's gate, called right before the AUTHENTICATE would
// leave: the first logon's negotiate and ad steps, then the failure ledger's
// reservation (in *id). The logon's timer stands still meanwhile.
func (c *checker) logonGate(ctx context.Context, f Form, started time.Time, timer *time.Timer, res *attemptResult, id *int64) smbconn.Gate {
	return func(info *smbconn.ServerInfo) error {
		timer.Stop()
		defer timer.Reset(c.o.StepTimeout)
		if !c.afterNegotiate(ctx, info, started) {
			res.stopped = true
			return errStopped
		}
		c.computeBudget()
		if c.probing {
			res.probed = true
			return errProbed
		}
		key, err := c.ledger.Key(ctx)
		if err != nil {
			return fmt.Errorf("failure ledger: %w", err)
		}
		a := Attempt{Account: c.accountKey(), Form: FormKey(f, c.t.Password.Reveal(), key), Typed: f.Typed, Seen: c.accountSeen()}
		if c.ntlmv2 {
			// The NTLMv2 retry of an NTLMv1 device is another attempt.
			a.Form += "|ntlmv2"
		}
		*id, res.refused, err = reserve(ctx, c.ledger, a, c.o.Now, c.o.Window, c.budget)
		if err != nil {
			return fmt.Errorf("failure ledger: %w", err)
		}
		if res.refused != nil {
			return errors.New(res.refused.Reason)
		}
		res.gateAt = time.Now()
		return nil
	}
}

// judgeAttempt classifies a failed logon's error (res.err) and resolves its
// reservation id in the failure ledger.
func (c *checker) judgeAttempt(ctx context.Context, id int64, res *attemptResult) {
	rctx := context.WithoutCancel(ctx)
	res.cause, res.ev = classify(StepSession, res.err)
	res.status, _ = smbconn.StatusOf(res.err)
	if id == 0 {
		// The gate was never reached: no AUTHENTICATE was sent.
		return
	}
	// The AUTHENTICATE left: whatever happened next (no answer, a dropped
	// connection, an interrupt), the DC may have counted it, so it counts
	// here too — as a failure whose cause is what was observed.
	out := Outcome{Kind: Failed, Cause: res.cause, Status: res.status.String()}
	if res.status == ntstatus.NTLMBlocked {
		// The server refused NTLM itself: no password was judged and no
		// bad logon counted, so the budget is not spent.
		out = Outcome{Kind: Cancelled}
	}
	if rerr := c.ledger.Resolve(rctx, id, out); rerr != nil {
		c.o.Logger.Warn("failure ledger", "err", rerr)
	}
}

func (c *checker) stepSession(ctx context.Context) bool {
	if c.t.auth() != AuthNTLM && !c.smb1 {
		return c.stepSessionKerberos(ctx)
	}
	return c.stepSessionNTLM(ctx)
}

func (c *checker) stepSessionNTLM(ctx context.Context) bool {
	stored := storedForm(c.t.User)
	res := c.attempt(ctx, c.conn, stored)
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
	s.Evidence["workstation"] = c.t.workstation()
	s.Evidence["form"] = formEvidence(stored)
	if c.negotiated {
		s.Evidence["budget"] = c.budget
	}
	if c.smb1 {
		s.Evidence["protocol"] = "SMB1 (NT LM 0.12), NTLMv2"
	}
	if c.krbNote != nil {
		// auth auto: Kerberos could not judge the password, NTLM follows.
		s.Evidence["auth"] = string(AuthAuto) + ": Kerberos, then NTLM"
		c.krbNote.evidence(s.Evidence)
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
	if c.sessionAnonymousRefused(s, res) || c.ntlmv1Refused(ctx, s, res) {
		return false
	}
	if res.status == ntstatus.NTLMBlocked && c.krbNote == nil && !c.smb1 {
		return c.ntlmBlocked(ctx, s)
	}
	if res.status.IsLogonFailure() {
		// The forms step names the cause: another form may work.
		c.end(s, StatusFail, fmt.Sprintf("the server refused %s: %s", describeForm(stored), res.status))
		return c.stepForms(ctx)
	}
	cause := res.cause
	detail := fmt.Sprintf("logon as %s failed: %s", describeForm(stored), errText(res))
	c.fail(s, cause, detail, c.accountFix(cause))
	c.skipWhy("not tried: this failure is not about how the user name is written", StepForms)
	return false
}

// explainNegotiation records the negotiate (and ad) step for a first logon
// that failed before the server's CHALLENGE. It reports whether the session
// step should follow (the failure then belongs to it).
func (c *checker) explainNegotiation(ctx context.Context, res attemptResult) bool {
	if res.info != nil {
		// The server negotiated and then refused the session setup.
		if !c.afterNegotiate(ctx, res.info, time.Now()) {
			return false
		}
		return true
	}
	if c.o.Device.SMB1Only {
		// The probe already said SMB1 is accepted; the session step
		// explains the rest.
		return true
	}
	if res.err != nil && isTimeout(res.err) {
		s := c.begin(StepNegotiate)
		c.negotiated = true
		_, ev := classify(StepNegotiate, res.err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		c.negotiateTimeout(ctx, s)
		return false
	}
	// One extra connection: why did SMB2 negotiation fail?
	c.stepProbe(ctx, res.err)
	return false
}

// negotiateTimeout ends the negotiate step of a server that accepted TCP
// and said nothing: on a port that is not an SMB port, an SMB server
// answering on 445 or 139 shows the stored port is another service.
func (c *checker) negotiateTimeout(ctx context.Context, s *stepState) {
	if !slices.Contains(smbPorts, c.t.port()) {
		if answers := c.huntSMB(ctx); smbElsewhere(answers) {
			c.failNotSMB(ctx, s, fmt.Sprintf("it says nothing to the SMB negotiate within %s", c.o.StepTimeout), answers)
			return
		}
	}
	c.fail(s, CauseTimeout, fmt.Sprintf("the server accepted TCP but did not answer the SMB negotiate within %s", c.o.StepTimeout), "")
}

// accountFix dates an account cause's fix from the directory, when known.
func (c *checker) accountFix(cause Cause) string {
	if c.account != nil && c.account.Cause == cause && c.account.Fix != "" {
		return c.account.Fix
	}
	if cause == CauseWorkstationRestricted {
		return fmt.Sprintf("Add %s (the MFP's NetBIOS name) to the account's 'Log On To' workstations, or remove the restriction.", c.t.workstation())
	}
	return ""
}

func (c *checker) refused(s *stepState, r *Refusal) {
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
	c.fail(s, CauseUnknown, fmt.Sprintf("not replayed: %s", r.Reason),
		"Nothing was replayed to protect the account from a lockout; check the account in the directory, or wait and check again.")
}

func (c *checker) stepForms(ctx context.Context) bool {
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
		res := c.attempt(ctx, nil, f)
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
			c.fail(s, CauseWrongUserFormat, fmt.Sprintf("the password is right, but the server refuses the user name as typed (%s) and accepts it as %s", c.t.User, f.Typed),
				fmt.Sprintf("On the MFP (Command Center RX → Address Book → the destination → Login User Name), type %s instead of %s.", f.Typed, c.t.User))
			// The check goes on with the working session.
			return true
		}
		failed = append(failed, fmt.Sprintf("%s: %s", f.Typed, errText(res)))
		if res.cause == CauseAccountLocked {
			s.Evidence["tried"] = tried
			s.Evidence["failed"] = failed
			c.fail(s, CauseAccountLocked, "the account is locked out; no further form is tried", "")
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
	c.fail(s, CauseBadCredentials, detail, fix)
	return false
}

func formEvidence(f Form) map[string]string {
	return map[string]string{"typed": f.Typed, "ntlm_user": f.User, "ntlm_domain": f.Domain, "kind": string(f.Kind)}
}

func describeForm(f Form) string {
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
