package smbcheck

// Guest and blank destinations: an MFP whose SMB destination stores an
// empty Login User Name (and password) logs on anonymously, and a server
// that maps unknown names to guest logs a mistyped account on as guest.
// Both work until the server changes (Windows 11 24H2 and Server 2025
// refuse guests and require signing, a NAS update turns guest off, a share
// loses its guest flag): the check says which of these the server did.

import (
	"fmt"
)

// anonymous reports whether the destination stores an empty login name:
// the MFP then sends an anonymous NTLM logon.
func (c *checker) anonymous() bool { return c.t.User == "" }

// who names the logon for sentences about permissions.
func (c *checker) who() string {
	if c.anonymous() {
		return "the anonymous logon (empty login name)"
	}
	return "the account " + c.form.Typed
}

// grantee names whom a fix gives a permission to.
func (c *checker) grantee() string {
	if c.anonymous() {
		return "the guest account (Everyone, ANONYMOUS LOGON on Windows)"
	}
	return c.form.Typed
}

// signingNote adds what a server requiring signing means for a guest.
func (c *checker) signingNote() string {
	if c.server != nil && c.server.SigningRequired {
		return "; the server requires SMB signing, which a guest or anonymous session cannot do (Windows 11 24H2 and Windows Server 2025 refuse such sessions for this reason, and so does an MFP that enforces signing)"
	}
	return ""
}

// guestWaysOut is the fix for a destination that depends on guest access.
func (c *checker) guestWaysOut(share string) string {
	return fmt.Sprintf("Better: create an account for the MFP on %s, give it Modify on the scan folder, and store it in the destination's Login User Name and Login Password (Command Center RX → Address Book). "+
		"Or allow guest access to share %s (Samba: guest ok = yes with map to guest = bad user; Windows: Everyone on the share and folder plus the insecure-guest-logon policy), knowing that anyone on the network can then read and write there.", c.t.Host, share)
}
