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

var errStopped = errors.New("check stopped before the logon")

var errProbed = errors.New("negotiate only: no logon sent")
