package smbcheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden/smbclient"
)

// The account a logon counts against in the failure ledger, and its
// budget: the same for a check and a Dial.

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
func (c *checker) foreignDirectory(acct *smbclient.Account) bool {
	return acct.Found && c.server != nil && c.server.DomainJoined() && acct.NetBIOSDomain != "" && !strings.EqualFold(acct.NetBIOSDomain, c.server.NetBIOSDomain)
}

// useAccount makes acct (a delivery's lookup, DialOptions.Accounts) the
// checker's account where the ad step would: not for an account local to
// the server, not from another domain's directory; then the budget follows
// it, as in a check.
func (c *checker) useAccount(acct *smbclient.Account) {
	if local, _ := c.localAccount(); acct != nil && !local && !c.foreignDirectory(acct) {
		c.account = acct
	}
	c.computeBudget()
}

// accountKey names the account for the ledger.
func (c *checker) accountKey() string {
	user, _ := smbclient.BaseUser(c.t.User)
	authority := c.t.Host
	if c.account != nil && c.account.Found {
		return smbclient.AccountKey(c.account.NetBIOSDomain, c.account.SAM)
	}
	if c.server != nil && c.server.NetBIOSDomain != "" {
		authority = c.server.NetBIOSDomain
	}
	return smbclient.AccountKey(authority, user)
}

// accountSeen is the directory's view of the account for the ledger (nil
// without a directory, or when it found no account).
func (c *checker) accountSeen() *smbclient.AccountSeen {
	if c.account == nil || !c.account.Found {
		return nil
	}
	return &smbclient.AccountSeen{State: c.account.Cause, PasswordLastSet: c.account.PasswordLastSet,
		DCBudget: c.account.Budget >= 0 && c.account.Budget <= c.o.MaxFailures}
}

func (c *checker) computeBudget() {
	c.budget = c.o.MaxFailures
	if c.account != nil && c.account.Found && c.account.Budget >= 0 && c.account.Budget < c.budget {
		c.budget = c.account.Budget
	}
}

var errStopped = errors.New("check stopped before the logon")

var errProbed = errors.New("negotiate only: no logon sent")
