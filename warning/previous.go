package warning

import (
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// previousPassword: the check logged on over NTLM with a password last
// known to be the account's current one before its pwdLastSet — the DC
// accepts the previous password for OldPasswordPeriod after a change, then
// refuses it. Learnt from pwdLastSet and the ledger alone: no extra logon.
func previousPassword(th Thresholds, o Observation, h History, loc *time.Location) *Warning {
	if !Suspect(th, o, h) {
		return nil
	}
	until := o.PasswordLastSet.Add(th.OldPasswordPeriod)
	on, subject, mfp := "", o.Account, "the MFP"
	if o.Device != "" {
		on, subject, mfp = " on "+o.Device, o.Account+" on "+o.Device, o.Device
	}
	return &Warning{Kind: PreviousPassword, Subject: subject, Due: until, KyoceraCode: code(scanwarden.CauseBadCredentials),
		Headline: fmt.Sprintf("the password stored%s for %s is the account's previous password (changed at %s); "+
			"the DC accepts it until about %s, then every scan fails with %s", on, samOf(o.Account),
			o.PasswordLastSet.In(loc).Format("15:04"), until.In(loc).Format("15:04"), code(scanwarden.CauseBadCredentials)),
		Fix: fmt.Sprintf("enter the account's new password on %s and in scanwarden (`scanwarden export addressbook` helps)", mfp),
		Evidence: smbcheck.Evidence{"password_last_set": o.PasswordLastSet.UTC().Format(time.RFC3339),
			"last_known_current": h.Proven.Current.UTC().Format(time.RFC3339), "accepted_until": until.UTC().Format(time.RFC3339)}}
}

// Suspect reports whether the password the check logged on with is the
// account's previous one: it passed over NTLM inside the old password
// period, and the password was last known current before pwdLastSet. A
// password never known current before (new in scanwarden) is not
// suspected; a Kerberos logon proves the current one.
func Suspect(th Thresholds, o Observation, h History) bool {
	if th.OldPasswordPeriod <= 0 || !o.Passed || o.Kerberos || o.Account == "" || o.PasswordLastSet.IsZero() ||
		h.Proven == nil || h.Proven.Current.IsZero() {
		return false
	}
	return h.Proven.Current.Before(o.PasswordLastSet) && o.At.Before(o.PasswordLastSet.Add(th.OldPasswordPeriod))
}
