package smbcheck

import (
	"context"
	"time"
)

// Directory is what a check asks Active Directory. Package ad implements it;
// a check works without one.
type Directory interface {
	// Account looks up the account that the user name typed on the MFP (any
	// form) refers to, judged for a logon from workstation.
	Account(ctx context.Context, typed, workstation string) (*Account, error)
	// Host looks up, in one question, the computer object of the target
	// host by its name as stored (DNS or NetBIOS name, or an address) or any
	// of its aliases (e.g. the NetBIOS name the server gives in NTLM).
	Host(ctx context.Context, name string, aliases ...string) (*Host, error)
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
	Cause Cause
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
	Evidence Evidence
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
