package smbcheck

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden"
)

// Directory is what a check asks Active Directory. Package ad implements it;
// a check works without one.
type Directory interface {
	Accounts
	// Host looks up, in one question, the computer object of the target
	// host by its name as stored (DNS or NetBIOS name, or an address) or any
	// of its aliases (e.g. the NetBIOS name the server gives in NTLM).
	Host(ctx context.Context, name string, aliases ...string) (*Host, error)
}

// Accounts is the directory's account lookup: what a check's ad step asks
// (Directory) and what a delivery's Dial asks (DialOptions.Accounts), so
// that both count a logon against the same account and budget.
type Accounts interface {
	// Account looks up the account that the user name typed on the MFP (any
	// form) refers to, judged for a logon from workstation.
	Account(ctx context.Context, typed, workstation string) (*Account, error)
}

// Account is what the directory knows of the scan account.
type Account struct {
	// Found is false when no account has the typed name (cause unknown-user).
	Found         bool
	SAM           string // sAMAccountName
	UPN           string // userPrincipalName
	NetBIOSDomain string // e.g. KYOLAB
	DNSDomain     string // e.g. kyolab.test
	// Cause is the account's state as a cause: CauseOK when it can log on
	// now, else account-disabled, account-locked, password-expired, ...
	Cause scanwarden.Cause
	// Certain is true when Cause needs no logon to be sure (disabled,
	// locked, expired, must change, workstation, hours); the check then
	// reports it without replaying a logon.
	Certain bool
	// Summary and Fix are dated ("locked since 09:12, unlocks 09:42").
	Summary string
	Fix     string
	// Budget is how many failed logons the account can take now, with a
	// safety margin, before the domain would lock it; -1 when the domain
	// has no lockout policy (then each form is tried at most once).
	Budget int
	// PasswordLastSet is the account's pwdLastSet (zero: unknown or never):
	// a password set after a failure lifts that failure's block (see
	// AccountSeen).
	PasswordLastSet time.Time
	// SIDs are the account's own SID and its groups' (tokenGroups), used to
	// judge a folder's ACL.
	SIDs []string
	// SIDNames names those SIDs (DOMAIN\name), when the directory knows
	// them, so that an ACL's deciding entry is shown by name.
	SIDNames map[string]string
	// What tells days ahead that the account will stop working (zero
	// when not known or never): when its password and the account
	// expire, the bad passwords the DC counts now (0 once its observation
	// window passed), the
	// last one's time and the domain's lockout threshold (0: none).
	PasswordExpires  time.Time
	AccountExpires   time.Time
	BadPwdCount      int
	LastBadPassword  time.Time
	LockoutThreshold int
	Evidence         Evidence
}

// Host is what the directory knows of the target computer.
type Host struct {
	Found     bool
	Name      string
	OS        string // operatingSystem, e.g. "Windows 11 Pro"
	OSVersion string // operatingSystemVersion, e.g. "10.0 (26100)"
	// DomainController is true when the host is a DC: it has no local
	// accounts, so .\user and HOST\user name domain accounts there.
	DomainController bool
	// Warnings are worth showing even when the check passes: a Windows
	// client edition allows 20 inbound sessions; 24H2 requires signing.
	Warnings []string
	Evidence Evidence
}

// foresight puts what tells days ahead that the account will stop working
// into the ad step's evidence, under stable keys that the warnings read
// back from a stored report: account (DOMAIN\sam), password_expires,
// account_expires, last_bad_password, password_last_set (RFC 3339, absent
// when not known or never), bad_pwd_count and lockout_threshold.
func (a *Account) foresight(ev Evidence) {
	who := a.SAM
	if a.NetBIOSDomain != "" {
		who = a.NetBIOSDomain + `\` + a.SAM
	}
	ev["account"] = who
	ev["bad_pwd_count"] = a.BadPwdCount
	ev["lockout_threshold"] = a.LockoutThreshold
	for k, t := range map[string]time.Time{"password_expires": a.PasswordExpires, "account_expires": a.AccountExpires,
		"last_bad_password": a.LastBadPassword, "password_last_set": a.PasswordLastSet} {
		if !t.IsZero() {
			// To the DC's precision: a bad password or a password change
			// is compared with when scanwarden's own logons went out.
			ev[k] = t.UTC().Format(time.RFC3339Nano)
		}
	}
}
