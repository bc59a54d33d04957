package smbcheck

import (
	"errors"

	"github.com/scanwarden/scanwarden/smbclient"
)

// The account a logon counts against in the failure ledger, and its
// budget: the same for a check and a Dial.

// logonAccount is the checker's account as the ledger sees it.
func (c *checker) logonAccount() smbclient.LogonAccount {
	return smbclient.LogonAccount{Target: c.t, Server: c.server, DomainController: c.host != nil && c.host.DomainController,
		Account: c.account, MaxFailures: c.o.MaxFailures}
}

// localAccount tells when the account the MFP uses is local to the server
// (smbclient.LogonAccount.Local).
func (c *checker) localAccount() (bool, string) { return c.logonAccount().Local() }

// foreignDirectory reports whether the directory that found acct is another
// domain's than the server's (smbclient.LogonAccount.Foreign).
func (c *checker) foreignDirectory(acct *smbclient.Account) bool {
	return c.logonAccount().Foreign(acct)
}

// accountKey names the account for the ledger.
func (c *checker) accountKey() string { return c.logonAccount().Key() }

// accountSeen is the directory's view of the account for the ledger.
func (c *checker) accountSeen() *smbclient.AccountSeen { return c.logonAccount().Seen() }

func (c *checker) computeBudget() { c.budget = c.logonAccount().Budget() }

var errStopped = errors.New("check stopped before the logon")

var errProbed = errors.New("negotiate only: no logon sent")
