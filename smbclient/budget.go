package smbclient

import (
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// LogonAccount is the account a logon counts against in the failure
// ledger, and its budget: the same for a check and a Dial.
type LogonAccount struct {
	Target scanwarden.Target
	// Server is what the server told in its negotiate (nil: not yet).
	Server *smbconn.ServerInfo
	// DomainController is set when the directory shows the server is a
	// domain controller: it has no local accounts.
	DomainController bool
	// Account is the directory's account where it applies (see Use; nil:
	// none).
	Account *Account
	// MaxFailures is the configured budget per account and window.
	MaxFailures int
}

// Local tells when the account the MFP uses is local to the server, so
// that the directory has nothing to say about it. A domain controller has
// no local accounts: there .\user and HOST\user are the domain's.
func (a LogonAccount) Local() (bool, string) {
	si := a.Server
	if si == nil || si.NetBIOSComputer == "" || a.DomainController {
		return false, ""
	}
	user := a.Target.User
	if d, _, ok := strings.Cut(user, `\`); ok && (d == "." || strings.EqualFold(d, si.NetBIOSComputer)) {
		return true, fmt.Sprintf(`the user name %s names an account local to %s`, user, si.NetBIOSComputer)
	}
	if !si.DomainJoined() {
		return true, fmt.Sprintf("%s is in no domain (its NTLM domain is its own name), so %s is one of its local accounts", si.NetBIOSComputer, user)
	}
	return false, ""
}

// Foreign reports whether the directory that found acct is another
// domain's than the server's: its answer about the account does not apply.
func (a LogonAccount) Foreign(acct *Account) bool {
	return acct.Found && a.Server != nil && a.Server.DomainJoined() && acct.NetBIOSDomain != "" && !strings.EqualFold(acct.NetBIOSDomain, a.Server.NetBIOSDomain)
}

// Use makes acct (a delivery's lookup, DialOptions.Accounts) the account
// where a check's ad step would: not for an account local to the server,
// not from another domain's directory.
func (a *LogonAccount) Use(acct *Account) {
	if local, _ := a.Local(); acct != nil && !local && !a.Foreign(acct) {
		a.Account = acct
	}
}

// Key names the account for the ledger.
func (a LogonAccount) Key() string {
	user, _ := BaseUser(a.Target.User)
	authority := a.Target.Host
	if a.Account != nil && a.Account.Found {
		return AccountKey(a.Account.NetBIOSDomain, a.Account.SAM)
	}
	if a.Server != nil && a.Server.NetBIOSDomain != "" {
		authority = a.Server.NetBIOSDomain
	}
	return AccountKey(authority, user)
}

// Seen is the directory's view of the account for the ledger (nil without
// a directory, or when it found no account).
func (a LogonAccount) Seen() *AccountSeen {
	if a.Account == nil || !a.Account.Found {
		return nil
	}
	return &AccountSeen{State: a.Account.Cause, PasswordLastSet: a.Account.PasswordLastSet,
		DCBudget: a.Account.Budget >= 0 && a.Account.Budget <= a.MaxFailures}
}

// Budget is how many failed logons the account may take in the window:
// MaxFailures, or the directory's lower budget (what the domain's lockout
// policy leaves, with a margin).
func (a LogonAccount) Budget() int {
	b := a.MaxFailures
	if a.Account != nil && a.Account.Found && a.Account.Budget >= 0 && a.Account.Budget < b {
		b = a.Account.Budget
	}
	return b
}
