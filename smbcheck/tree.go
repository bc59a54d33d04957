package smbcheck

import (
	"context"
	"fmt"

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
		c.ok(s, "connected to share "+c.t.Share)
		return sh, true
	}
	cause, ev := classify(StepTree, err)
	for k, v := range ev {
		s.Evidence[k] = v
	}
	var detail, fix string
	switch cause {
	case CauseShareNotFound:
		detail = fmt.Sprintf("the server has no share %s", c.t.Share)
		fix = fmt.Sprintf("Correct the share name in the destination's Path on the MFP (it starts with the share: %s\\...), or create the share %s on %s.", c.t.Share, c.t.Share, c.t.Host)
	case CauseShareAccessDenied:
		if c.treeGuestRefused(s) {
			return nil, false
		}
		detail = fmt.Sprintf("the server refuses %s access to share %s", c.grantee(), c.t.Share)
		fix = fmt.Sprintf("Give %s (or a group it belongs to) access to share %s: Share Permissions on Windows, 'valid users' / 'read only' on Samba.", c.grantee(), c.t.Share)
	case CauseConnectionLimit:
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
