package ad

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
)

// state is one reason an account cannot log on now.
type state struct {
	cause        scanwarden.Cause
	summary, fix string
}

// judge turns an account's attributes into a cause, a dated summary and
// fix, and the failure budget. It is pure: now and loc come from outside.
func judge(r *record, t typedName, how, ws string, dom *domainInfo, pol policy, now time.Time, margin int, loc *time.Location) *User {
	if loc == nil {
		loc = time.UTC
	}
	j := &judging{r: r, pol: pol, now: now, loc: loc, ws: ws, who: r.SAM}
	if dom.NetBIOS != "" {
		j.who = dom.NetBIOS + `\` + r.SAM
	}
	j.u = newFoundUser(r, t, how, ws, dom, pol, now)
	u := j.u
	// The order is the one a Samba DC checks the states in.
	var states []state
	for _, check := range []func() *state{j.disabled, j.locked, j.accountExpired, j.smartcard, j.password, j.workstations, j.hours} {
		if s := check(); s != nil {
			states = append(states, *s)
		}
	}
	u.Budget = budget(pol.Threshold, u.BadPwdCount, margin, u.Locked)
	prefix := j.matchNote(t, how, dom)
	return j.conclude(states, prefix)
}

// judging is one account being judged: what judge's state checks share.
type judging struct {
	r   *record
	u   *User
	pol policy
	now time.Time
	loc *time.Location
	who string // DOMAIN\sam
	ws  string // the workstation name the MFP sends
}

func (j *judging) when(x time.Time) string { return fmtWhen(x, j.now, j.loc) }

func (j *judging) day(x time.Time) string { return fmtDay(x, j.now, j.loc) }

// newFoundUser is the answer's frame for a found account: names, groups,
// SIDs and the bad-password count as the DC counts it now.
func newFoundUser(r *record, t typedName, how, ws string, dom *domainInfo, pol policy, now time.Time) *User {
	u := &User{
		Typed: t.Typed, Workstation: ws, Found: true, MatchedBy: how, DN: r.DN, SAM: r.SAM, UPN: r.UPN,
		NetBIOSDomain: dom.NetBIOS, DNSDomain: dom.DNS, Enabled: r.UAC&uacAccountDisable == 0,
		LockoutThreshold: pol.Threshold, Workstations: r.Workstations, Groups: groupNames(r.MemberOf),
		SIDs: []string{}, Policy: pol.evidence(), Evidence: r.Raw,
	}
	if u.Workstations == nil {
		u.Workstations = []string{}
	}
	if r.SID != "" {
		u.SIDs = append(u.SIDs, r.SID)
	}
	for _, g := range r.TokenGroups {
		if !slices.Contains(u.SIDs, g) {
			u.SIDs = append(u.SIDs, g)
		}
	}
	u.Evidence["matched_by"] = how
	u.Evidence["policy"] = u.Policy

	// Bad passwords as the DC counts them: the count restarts once the
	// observation window has passed since the last bad password.
	u.BadPwdCount = r.BadPwdCount
	if r.BadPasswordTime > 0 {
		bt := fileTime(r.BadPasswordTime)
		u.LastBadPassword = &bt
		if pol.Window > 0 && now.Sub(bt) >= pol.Window {
			u.BadPwdCount = 0
		}
	}
	return u
}

func (j *judging) disabled() *state {
	if j.u.Enabled {
		return nil
	}
	r := j.r
	return &state{scanwarden.CauseAccountDisabled,
		fmt.Sprintf("%s is disabled (userAccountControl %s)", j.who, uacString(r.UAC)),
		fmt.Sprintf("Enable %s in Active Directory Users and Computers (or Enable-ADAccount %s), then check the MFP's stored password.", r.SAM, r.SAM)}
}

// smartcard: an account that must log on with a smart card takes no
// password logon — the MFP's — whatever the password.
func (j *judging) smartcard() *state {
	r := j.r
	if r.UAC&uacSmartcardRequired == 0 {
		return nil
	}
	return &state{scanwarden.CauseSmartcardRequired,
		fmt.Sprintf("%s must log on with a smart card (userAccountControl %s): the MFP's password logon is refused", j.who, uacString(r.UAC)),
		fmt.Sprintf("Use an account for the MFP that logs on with a password, or clear \"Smart card is required for interactive logon\" on %s (Set-ADUser %s -SmartcardLogonRequired $false) and set its password on the MFP.", r.SAM, r.SAM)}
}

func (j *judging) locked() *state {
	r, u, pol := j.r, j.u, j.pol
	if r.LockoutTime <= 0 {
		return nil
	}
	since := fileTime(r.LockoutTime)
	u.LockedSince = &since
	var until *time.Time
	if !pol.UntilUnlocked {
		x := since.Add(pol.Duration)
		until = &x
	}
	if r.HasUACComputed {
		u.Locked = r.UACComputed&uacLockout != 0
	} else {
		u.Locked = until == nil || j.now.Before(*until)
	}
	if !u.Locked {
		return nil
	}
	u.LockedUntil = until
	attempts := "too many bad passwords"
	if r.BadPwdCount > 0 {
		attempts = fmt.Sprintf("%d bad attempts", r.BadPwdCount)
	}
	sum := fmt.Sprintf("%s is locked out since %s after %s (threshold %d)", j.who, j.when(since), attempts, pol.Threshold)
	wait := "wait for the lockout to expire"
	if until != nil {
		sum += ", unlocks " + j.when(*until)
		wait = "wait until " + j.when(*until)
	} else {
		sum += "; it stays locked until an administrator unlocks it"
		wait = "an administrator must unlock it"
	}
	return &state{scanwarden.CauseAccountLocked, sum,
		fmt.Sprintf("Unlock %s (Active Directory Users and Computers → Account → Unlock account, or Unlock-ADAccount %s) or %s; then check again at once: if the Login Password stored on the MFP is wrong, its retries lock the account again.", r.SAM, r.SAM, wait)}
}

func (j *judging) accountExpired() *state {
	r := j.r
	if r.AccountExpires == 0 || r.AccountExpires == fileTimeNever {
		return nil
	}
	exp := fileTime(r.AccountExpires)
	j.u.AccountExpires = &exp
	if j.now.Before(exp) {
		return nil
	}
	return &state{scanwarden.CauseAccountExpired,
		fmt.Sprintf("%s expired on %s (accountExpires)", j.who, j.day(exp)),
		fmt.Sprintf("Extend or clear the expiry date of %s (Active Directory Users and Computers → Account → Account expires, or Set-ADAccountExpiration %s).", r.SAM, r.SAM)}
}

// password: must change, expired, or when it will expire.
func (j *judging) password() *state {
	r, u, pol := j.r, j.u, j.pol
	if r.PwdLastSet > 0 {
		set := fileTime(r.PwdLastSet)
		u.PasswordLastSet = &set
	}
	u.PasswordNeverExpires = r.UAC&(uacDontExpirePassword|uacSmartcardRequired) != 0
	switch {
	case r.HasPwdExpiry && r.PwdExpiry == fileTimeNever:
		u.PasswordNeverExpires = true
	case r.HasPwdExpiry && r.PwdExpiry > 0:
		x := fileTime(r.PwdExpiry)
		u.PasswordExpires = &x
	case !r.HasPwdExpiry && !u.PasswordNeverExpires && r.PwdLastSet > 0 && !pol.PwdNeverExpire:
		x := fileTime(r.PwdLastSet).Add(pol.MaxPwdAge)
		u.PasswordExpires = &x
	case !r.HasPwdExpiry && pol.PwdNeverExpire:
		u.PasswordNeverExpires = true
	}
	if u.PasswordNeverExpires {
		u.PasswordExpires = nil
	}
	u.MustChangePassword = r.PwdLastSet == 0 && !u.PasswordNeverExpires
	expired := u.PasswordExpires != nil && !j.now.Before(*u.PasswordExpires)
	if r.HasUACComputed && r.UACComputed&uacPasswordExpired != 0 && !u.MustChangePassword {
		expired = true
	}
	switch {
	case u.MustChangePassword:
		return &state{scanwarden.CausePasswordMustChange,
			fmt.Sprintf("%s must change its password at next logon (pwdLastSet=0), which an MFP cannot do", j.who),
			fmt.Sprintf("Clear \"User must change password at next logon\" for %s (or set a new password without it) and enter the password on the MFP.", r.SAM)}
	case expired:
		sum := fmt.Sprintf("the password of %s expired", j.who)
		if u.PasswordExpires != nil {
			sum += " on " + j.day(*u.PasswordExpires)
		}
		if u.PasswordLastSet != nil {
			sum += " (set " + j.day(*u.PasswordLastSet)
			if !pol.PwdNeverExpire {
				sum += fmt.Sprintf(", maximum age %s", fmtDays(pol.MaxPwdAge))
			}
			sum += ")"
		}
		return &state{scanwarden.CausePasswordExpired, sum,
			fmt.Sprintf("Set a new password for %s and enter it on the MFP (Login Password); for a scan account consider a password that does not expire (a fine-grained password policy), and keep the MFP in step whenever it changes.", r.SAM)}
	}
	return nil
}

// workstations: "Log on to" (userWorkstations), compared with the NetBIOS
// name the MFP sends.
func (j *judging) workstations() *state {
	r, ws := j.r, j.ws
	if len(r.Workstations) == 0 || slices.ContainsFunc(r.Workstations, func(w string) bool { return strings.EqualFold(w, ws) }) {
		return nil
	}
	list := strings.Join(r.Workstations, ", ")
	return &state{scanwarden.CauseWorkstationRestricted,
		fmt.Sprintf("%s may log on only to %s — the MFP sends %s", j.who, list, ws),
		fmt.Sprintf("Add %s to the \"Log On To\" list of %s (Active Directory Users and Computers → Account → Log On To), or remove the restriction; %s is the NetBIOS name the MFP sends (its host name).", ws, r.SAM, ws)}
}

// hours: logon hours (a UTC bitmap).
func (j *judging) hours() *state {
	r, u, now, loc := j.r, j.u, j.now, j.loc
	u.LogonHours = "all"
	if r.HasLogonHours && !r.LogonHours.valid() {
		u.Evidence["logonHours_note"] = fmt.Sprintf("%d bytes, want 21: not judged", len(r.LogonHours))
		return nil
	}
	if !r.HasLogonHours {
		return nil
	}
	u.LogonHours = r.LogonHours.String()
	if r.LogonHours.allowed(now) {
		return nil
	}
	sum := fmt.Sprintf("%s may not log on at this hour (%s %s); its logon hours allow ", j.who, now.In(loc).Format("Mon"), now.In(loc).Format("15:04"))
	if next, ok := r.LogonHours.next(now); ok {
		sum += u.LogonHours + "; next allowed " + next.In(loc).Format("Mon 2 Jan 15:04")
	} else {
		sum += "no hour at all"
	}
	return &state{scanwarden.CauseLogonHours, sum,
		fmt.Sprintf("Widen the logon hours of %s (Active Directory Users and Computers → Account → Logon Hours) to cover scanning times.", r.SAM)}
}

// matchNote says how the typed name found the account (the summary's
// prefix) and notes a typed prefix that is not the domain.
func (j *judging) matchNote(t typedName, how string, dom *domainInfo) string {
	prefix := ""
	switch how {
	case "upn-prefix":
		prefix = fmt.Sprintf("the user name %s is not a sAMAccountName: it matched the UPN prefix of %s (%s), so the MFP must send %s or %s. ", t.Typed, j.who, j.r.UPN, j.r.UPN, j.who)
	case "implicit-upn":
		prefix = fmt.Sprintf("the user name %s matched %s as its implicit UPN (sAMAccountName@%s). ", t.Typed, j.who, dom.DNS)
	}
	switch {
	case t.Kind == "local":
		j.u.Evidence["typed_domain_note"] = fmt.Sprintf(`".\" names a local account of the target server; the domain account %s of the same name was judged`, j.who)
	case t.Kind == "domain" && !domainPrefix(t, dom):
		j.u.Evidence["typed_domain_note"] = fmt.Sprintf("the typed prefix %s is not the domain %s (%s): a Windows server reads it as a local account of that computer", t.Prefix, dom.NetBIOS, dom.DNS)
	}
	return prefix
}

// conclude sets the cause, summary and fix from the states found (the
// first decides; the others are listed).
func (j *judging) conclude(states []state, prefix string) *User {
	u := j.u
	if len(states) == 0 {
		u.Cause, u.Causes = scanwarden.CauseOK, []scanwarden.Cause{scanwarden.CauseOK}
		u.Summary = prefix + okSummary(u, j.who, j.now, j.day, j.pol)
		u.Fix = "Nothing to fix in the account."
		if u.PasswordExpires != nil && u.PasswordExpires.Sub(j.now) < 14*24*time.Hour {
			u.Fix = fmt.Sprintf("Set a new password for %s before %s and enter it on the MFP at the same time.", j.r.SAM, j.day(*u.PasswordExpires))
		}
		if u.AccountExpires != nil && u.AccountExpires.Sub(j.now) < 14*24*time.Hour {
			u.Fix = fmt.Sprintf("Extend or clear the expiry date of %s before %s (Set-ADAccountExpiration %s), or move the MFPs to an account that does not expire.", j.r.SAM, j.day(*u.AccountExpires), j.r.SAM)
		}
		return u
	}
	for _, s := range states {
		u.Causes = append(u.Causes, s.cause)
	}
	u.Cause, u.Certain = states[0].cause, true
	u.Summary = prefix + states[0].summary
	if len(states) > 1 {
		var also []string
		for _, s := range states[1:] {
			also = append(also, s.summary)
		}
		u.Summary += "; also " + strings.Join(also, "; ")
	}
	u.Fix = states[0].fix
	return u
}

// budget is how many more failed logons a check may cause: the lockout
// threshold less the bad passwords already counted less a safety margin, at
// least 0; −1 when the domain has no lockout policy; 0 while locked.
func budget(threshold, bad, margin int, locked bool) int {
	switch {
	case threshold <= 0:
		return -1
	case locked:
		return 0
	}
	return max(0, threshold-bad-max(margin, 1))
}

func okSummary(u *User, who string, now time.Time, day func(time.Time) string, pol policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s can log on now", who)
	if pol.Threshold > 0 {
		fmt.Fprintf(&b, ": %d of %d bad attempts", u.BadPwdCount, pol.Threshold)
	} else {
		b.WriteString(": no lockout policy")
	}
	switch {
	case u.PasswordNeverExpires:
		b.WriteString(", password does not expire")
	case u.PasswordExpires != nil:
		fmt.Fprintf(&b, ", password expires %s", day(*u.PasswordExpires))
		if left := u.PasswordExpires.Sub(now); left < 14*24*time.Hour {
			fmt.Fprintf(&b, " (in %s: the MFP will fail then unless it gets the new one)", fmtDays(left))
		}
	}
	if u.AccountExpires != nil {
		fmt.Fprintf(&b, ", account expires %s", day(*u.AccountExpires))
		if left := u.AccountExpires.Sub(now); left < 14*24*time.Hour {
			fmt.Fprintf(&b, " (in %s: the MFP will fail then unless the expiry is extended)", fmtDays(left))
		}
	}
	if len(u.Workstations) > 0 {
		fmt.Fprintf(&b, ", may log on only to %s (the MFP sends %s)", strings.Join(u.Workstations, ", "), u.Workstation)
	}
	if u.LogonHours != "all" {
		fmt.Fprintf(&b, ", logon hours %s", u.LogonHours)
	}
	return b.String()
}

// groupNames turns memberOf DNs into their names, sorted.
func groupNames(dns []string) []string {
	out := []string{}
	for _, dn := range dns {
		name := dn
		if p, err := ldap.ParseDN(dn); err == nil && len(p.RDNs) > 0 && len(p.RDNs[0].Attributes) > 0 {
			name = p.RDNs[0].Attributes[0].Value
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// fmtWhen shows a moment briefly: "09:12" today, "1 Dec 09:12" this year,
// else with the year.
func fmtWhen(t, now time.Time, loc *time.Location) string {
	t, now = t.In(loc), now.In(loc)
	switch {
	case t.YearDay() == now.YearDay() && t.Year() == now.Year():
		return t.Format("15:04")
	case t.Year() == now.Year():
		return t.Format("2 Jan 15:04")
	}
	return t.Format("2 Jan 2006 15:04")
}

// fmtDay shows a date: "12 Nov", with the year when it is not this year's.
func fmtDay(t, now time.Time, loc *time.Location) string {
	t, now = t.In(loc), now.In(loc)
	if t.Year() == now.Year() {
		return t.Format("2 Jan")
	}
	return t.Format("2 Jan 2006")
}

// fmtDays shows a long duration in days (or hours when under two days).
func fmtDays(d time.Duration) string {
	if d < 48*time.Hour {
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}
