package smbcheck

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbconn"
)

// treeStep connects the share (the one share the later steps use).
type treeStep struct{ *checker }

func (treeStep) ids() []string { return []string{StepTree} }

func (c treeStep) run(ctx context.Context) bool {
	sh, ok := c.stepTree(ctx)
	c.share = sh
	return ok
}

func (c treeStep) stepTree(ctx context.Context) (*smbconn.Share, bool) {
	s := c.begin(StepTree)
	tctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	unc := fmt.Sprintf(`\\%s\%s`, c.t.Host, c.t.Share)
	s.Evidence["unc"] = unc
	sh, err := c.sess.Mount(tctx, c.t.Host, c.t.Share)
	if err == nil {
		if sh.EncryptionAsked() {
			// What the server demands, said even when it passes: an MFP
			// that cannot encrypt is refused here.
			s.Evidence["encryption"] = "asked by the server (SMB3)"
			if d := c.o.Device; d.NoEncryption && !c.smb1 && !d.EncryptionWithheld() {
				return sh, c.encryptionAsked(ctx, s)
			}
			c.ok(s, "connected to share "+c.t.Share+"; the server asks for SMB3 encryption on it")
			return sh, true
		}
		c.ok(s, "connected to share "+c.t.Share)
		return sh, true
	}
	cause, ev := classify(StepTree, err)
	for k, v := range ev {
		s.Evidence[k] = v
	}
	var detail, fix string
	switch cause {
	case scanwarden.CauseShareNotFound:
		detail = fmt.Sprintf("the server has no share %s", c.t.Share)
		fix = fmt.Sprintf("Correct the share name in the destination's Path on the MFP (it starts with the share: %s\\...), or create the share %s on %s.", c.t.Share, c.t.Share, c.t.Host)
	case scanwarden.CauseShareAccessDenied:
		if c.treeGuestRefused(s) || c.encryptionRefused(ctx, s) {
			return nil, false
		}
		detail = fmt.Sprintf("the server refuses %s access to share %s", c.grantee(), c.t.Share)
		fix = fmt.Sprintf("Give %s (or a group it belongs to) access to share %s: Share Permissions on Windows, 'valid users' / 'read only' on Samba.", c.grantee(), c.t.Share)
	case scanwarden.CauseConnectionLimit:
		detail = fmt.Sprintf("share %s refuses another connection (%v): its connection limit is reached", c.t.Share, s.Evidence["nt_status"])
		fix = fmt.Sprintf("Raise the share's connection limit ('max connections' on Samba, 'User limit' on Windows) or find what holds the connections to %s.", c.t.Share)
	default:
		detail = fmt.Sprintf("tree connect to %s failed: %v", unc, err)
	}
	c.fail(s, cause, detail, fix)
	return nil, false
}

// treeGuestRefused judges a share that refused a guest or anonymous
// session; it reports false when the session was a real logon.
func (c treeStep) treeGuestRefused(s *stepState) bool {
	switch {
	case c.anonymous():
		c.fail(s, scanwarden.CauseGuestRefused, fmt.Sprintf("the server accepted the anonymous session, but share %s takes no guests%s", c.t.Share, c.signingNote()),
			c.guestWaysOut(c.t.Share))
		return true
	case c.sess != nil && c.sess.Guest():
		c.fail(s, scanwarden.CauseUnknownUser, fmt.Sprintf("the server does not know the account %s: it logged it on as guest, and share %s takes no guests", c.t.User, c.t.Share),
			fmt.Sprintf("Correct the Login User Name on the MFP (Command Center RX → Address Book), or create the account %s on %s with access to share %s.", c.t.User, c.t.Host, c.t.Share))
		return true
	}
	return false
}

// encryptionRefused tells, for an MFP that cannot encrypt, a share that
// refused it because it demands SMB3 encryption: scanwarden's own client
// (which encrypts) logs on once more and connects the share — only on this
// failure, the password being known right. It ends the tree step and
// reports true when the share let that client in and asked it for
// encryption.
func (c treeStep) encryptionRefused(ctx context.Context, s *stepState) bool {
	d := c.o.Device
	if g := gatedLogon(c); !g.cannotEncrypt() || !g.ownClientAskedToEncrypt(ctx, c.form) {
		return false
	}
	s.Evidence["encryption"] = "required: scanwarden's own client is let in and asked to encrypt"
	s.Evidence["device_encrypts"] = false
	why := "the MFP cannot encrypt"
	if d.MaxDialect != 0 && d.MaxDialect < DialectSMB30 {
		why = fmt.Sprintf("the MFP's highest dialect, SMB %s, has no encryption", d.MaxDialect)
	}
	c.fail(s, scanwarden.CauseEncryptionRequired, fmt.Sprintf("share %s requires SMB3 encryption and %s: the server refuses it at the tree connect", c.t.Share, why),
		fmt.Sprintf("Stop requiring encryption on share %s (Windows: Set-SmbShare -Name %s -EncryptData $false; Samba: smb encrypt = desired), or update the MFP to firmware whose SMB client encrypts (SMB 3); or let the MFP scan to scanwarden's fallback share, whose forwarder encrypts.", c.t.Share, c.t.Share))
	return true
}

// encryptionAsked ends the tree step of an MFP that cannot encrypt on a
// share the server asked to encrypt, where the replay could not withhold
// encryption (its negotiate offered SMB 3.1.1, whose encryption offer the
// SMB library always sends). The request alone does not tell a demand
// (Windows' EncryptData, Samba's required) from a wish (Samba's desired),
// so one more logon as a client that offers no encryption — SMB 3.0.2
// with the capability left out, the password being known right —
// connects the share: refused, the MFP is refused too; let in, the server
// only wishes. A server that takes no dialect below 3.1.1 cannot be asked
// so: its request is taken as the demand Windows makes of it
// (RejectUnencryptedAccess). It reports whether the step passed.
func (c treeStep) encryptionAsked(ctx context.Context, s *stepState) bool {
	plain := c.o.Device
	plain.MaxDialect = DialectSMB302
	if plain.MinDialect > DialectSMB302 {
		plain.MinDialect = 0
	}
	c.as = &plain
	res := gatedLogon(c).attempt(ctx, nil, c.form)
	c.as = nil
	judged := ""
	switch {
	case res.sess != nil:
		defer res.sess.Close()
		tctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
		defer cancel()
		sh, err := res.sess.Mount(tctx, c.t.Host, c.t.Share)
		if err == nil {
			sh.Close()
			s.Evidence["encryption"] = "asked by the server, not required: a client without encryption (SMB 3.0.2) is let in"
			c.ok(s, "connected to share "+c.t.Share+"; the server asks for SMB3 encryption on it but lets a client that cannot encrypt in")
			return true
		}
		if cause, _ := classify(StepTree, err); cause != scanwarden.CauseShareAccessDenied {
			judged = fmt.Sprintf("a client without encryption could not be asked (tree connect: %v)", err)
		}
	case res.status == ntstatus.AccessDenied:
		// The server refuses the whole session to a client that cannot
		// encrypt (Samba: server smb encrypt = required in [global]).
	case res.info == nil:
		judged = "the server takes no dialect below SMB 3.1.1, so a client without encryption could not be asked"
	default:
		judged = fmt.Sprintf("a client without encryption could not be asked (%s)", errText(res))
	}
	s.Evidence["device_encrypts"] = false
	how := "a client without encryption (SMB 3.0.2) is refused"
	if judged != "" {
		how = "judged from the server's request: " + judged
	}
	s.Evidence["encryption"] = "required: " + how
	c.fail(s, scanwarden.CauseEncryptionRequired, fmt.Sprintf("share %s requires SMB3 encryption and the MFP cannot encrypt (%s)", c.t.Share, how),
		fmt.Sprintf("Stop requiring encryption on share %s (Windows: Set-SmbShare -Name %s -EncryptData $false; Samba: smb encrypt = desired), or turn on the MFP's SMB encryption if its firmware has it; or let the MFP scan to scanwarden's fallback share, whose forwarder encrypts.", c.t.Share, c.t.Share))
	return false
}
