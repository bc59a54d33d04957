package smbcheck

// Guest and blank destinations: an MFP whose SMB destination stores an
// empty Login User Name (and password) logs on anonymously, and a server
// that maps unknown names to guest logs a mistyped account on as guest.
// Both work until the server changes (Windows 11 24H2 and Server 2025
// refuse guests and require signing, a NAS update turns guest off, a share
// loses its guest flag): the check says which of these the server did.

import (
	"fmt"

	"github.com/scanwarden/scanwarden/internal/ntstatus"
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

// blankPassword words a refused logon whose stored password is empty.
func (c *checker) blankPassword(s *stepState, detail string) (string, string) {
	if c.anonymous() || !c.t.Password.IsZero() {
		return detail, ""
	}
	s.Evidence["password"] = "empty"
	return detail + "; the destination's Login Password is empty, and the server refuses the account without a password",
		fmt.Sprintf("Enter the account's password in the destination's Login Password on the MFP (Command Center RX → Address Book); a server does not accept %s with an empty password (Windows refuses blank passwords over the network by default).", c.t.User)
}

// sessionGuest ends the session step when the logon succeeded for an empty
// login or as guest; it reports false when the session is not one of these.
func (c *checker) sessionGuest(s *stepState, res attemptResult) bool {
	switch {
	case c.anonymous():
		s.Evidence["anonymous"] = true
		if res.sess.Guest() {
			s.Evidence["guest"] = true
		}
		c.warnAction(s, "the server accepted an anonymous session (empty login name and password, as the MFP sends them)"+c.signingNote(),
			"the destination has no login: it depends on the server's guest access, which Windows 11 24H2, Windows Server 2025 and NAS updates turn off — give the MFP an account")
		return true
	case res.sess.Guest():
		s.Evidence["guest"] = true
		s.Evidence["mapped_to_guest"] = true
		c.warnAction(s, fmt.Sprintf("the server does not know the account %s: it logged it on as guest without checking the password (map to guest)%s", c.t.User, c.signingNote()),
			fmt.Sprintf("the server does not know the account %s and lets the MFP in as guest: correct the Login User Name on the MFP or create the account on %s", c.t.User, c.t.Host))
		return true
	}
	return false
}

// sessionAnonymousRefused ends the session step when the server refused an
// anonymous logon; it reports false when the logon was not anonymous.
func (c *checker) sessionAnonymousRefused(s *stepState, res attemptResult) bool {
	if !c.anonymous() || !(res.status.IsLogonFailure() || res.status == ntstatus.AccessDenied) {
		return false
	}
	s.Evidence["anonymous"] = true
	c.fail(s, CauseGuestRefused, fmt.Sprintf("the server refuses an anonymous logon (empty login name and password, as the MFP sends them): %s%s", res.status, c.signingNote()),
		c.guestWaysOut(c.t.Share))
	c.skipWhy("not tried: an empty login name has no other form", StepForms)
	return true
}

// treeGuestRefused judges a share that refused a guest or anonymous
// session; it reports false when the session was a real logon.
func (c *checker) treeGuestRefused(s *stepState) bool {
	switch {
	case c.anonymous():
		c.fail(s, CauseGuestRefused, fmt.Sprintf("the server accepted the anonymous session, but share %s takes no guests%s", c.t.Share, c.signingNote()),
			c.guestWaysOut(c.t.Share))
		return true
	case c.sess != nil && c.sess.Guest():
		c.fail(s, CauseUnknownUser, fmt.Sprintf("the server does not know the account %s: it logged it on as guest, and share %s takes no guests", c.t.User, c.t.Share),
			fmt.Sprintf("Correct the Login User Name on the MFP (Command Center RX → Address Book), or create the account %s on %s with access to share %s.", c.t.User, c.t.Host, c.t.Share))
		return true
	}
	return false
}
