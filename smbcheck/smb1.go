package smbcheck

import (
	"context"
	"fmt"
)

// ntlmv1Refused tells, for an MFP that logs on with NTLMv1, a server that
// refuses NTLMv1 from a wrong password: after a plain logon failure it
// replays the same name and password once with NTLMv2, within the budget.
// It ends the session step when NTLMv2 is accepted and reports whether it
// did.
func (c *checker) ntlmv1Refused(ctx context.Context, s *stepState, res attemptResult) bool {
	if !c.smb1 || !c.o.Device.NTLMv1 || c.anonymous() || !res.status.IsLogonFailure() {
		return false
	}
	c.ntlmv2 = true
	v2 := c.attempt(ctx, nil, storedForm(c.t.User))
	c.ntlmv2 = false
	switch {
	case v2.sess != nil:
		v2.sess.Close()
		s.Evidence["ntlmv1"] = res.status.String()
		s.Evidence["ntlmv2"] = "accepted"
		c.fail(s, CauseSMB1Refused, fmt.Sprintf("the server refuses the MFP's NTLMv1 logon (%s), and accepts the same user name and password with NTLMv2", res.status),
			"Switch the MFP to NTLMv2 (a firmware update may be needed), or better to SMB2/SMB3; only as a stop-gap allow NTLMv1 on the server (Samba: ntlm auth = ntlmv1-permitted; Windows: LmCompatibilityLevel 4 or lower), which weakens every account's password protection.")
		c.skipWhy("not tried: the password is right, the server refuses NTLMv1", StepForms)
		return true
	case v2.refused != nil:
		s.Evidence["ntlmv2"] = "not replayed: " + v2.refused.Reason
	default:
		s.Evidence["ntlmv2"] = errText(v2)
	}
	return false
}
