package smbclient

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden"
)

// Accounts is the directory's account lookup: what a check's ad step asks
// (smbcheck.Directory) and what a delivery's Dial asks
// (DialOptions.Accounts), so that both count a logon against the same
// account and budget.
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
	Evidence         map[string]any
}
