package smbcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// adStep asks the directory about the account and the host; it runs
// inside the first logon, right before its AUTHENTICATE would leave.
type adStep struct{ *checker }

func (c adStep) stepAD(ctx context.Context) bool {
	s := c.begin(StepAD)
	actx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	hostWarn, err := c.adHost(actx, s)
	if err != nil {
		s.Evidence["error"] = err.Error()
		c.warnAction(s, "Active Directory could not be asked ("+err.Error()+"); the check goes on without it", "Active Directory could not be asked")
		return true
	}
	if local, why := c.logonAccount().Local(); local {
		s.Evidence["account"] = "local to the server"
		c.adEnd(s, why+": the directory is not asked about it", hostWarn)
		return true
	}
	acct, err := c.o.Directory.Account(actx, c.t.User, c.t.WorkstationName())
	if err != nil {
		s.Evidence["error"] = err.Error()
		c.warnAction(s, "Active Directory could not be asked ("+err.Error()+"); the check goes on without it", "Active Directory could not be asked")
		return true
	}
	for k, v := range acct.Evidence {
		s.Evidence[k] = v
	}
	if c.logonAccount().Foreign(acct) {
		c.adEnd(s, fmt.Sprintf("the server belongs to domain %s, the directory is %s: its answer about the account does not apply", c.server.NetBIOSDomain, acct.NetBIOSDomain), hostWarn)
		return true
	}
	c.account = acct
	if !acct.Found {
		c.fail(s, scanwarden.CauseUnknownUser, fmt.Sprintf("the directory has no account %s", c.t.User), acct.Fix)
		return false
	}
	s.Evidence["budget"] = acct.Budget
	foresight(acct, s.Evidence)
	if acct.Cause != scanwarden.CauseOK && acct.Cause != "" && acct.Certain {
		c.fail(s, acct.Cause, acct.Summary, acct.Fix)
		return false
	}
	detail := fmt.Sprintf("account %s (%s) can log on", acct.SAM, acct.UPN)
	if acct.Summary != "" {
		detail = acct.Summary
	}
	c.adEnd(s, detail, hostWarn)
	return true
}

func (c adStep) adEnd(s *stepState, detail string, hostWarn []string) {
	if len(hostWarn) > 0 {
		c.warnAction(s, detail+"; "+strings.Join(hostWarn, "; "), strings.Join(hostWarn, "; "))
		return
	}
	c.ok(s, detail)
}

// adHost looks up the target's computer object — by the name the MFP
// stores or the server's own NetBIOS name, in one question — and returns
// its warnings.
func (c adStep) adHost(ctx context.Context, s *stepState) ([]string, error) {
	var aliases []string
	if c.server != nil && c.server.NetBIOSComputer != "" {
		aliases = append(aliases, c.server.NetBIOSComputer)
	}
	h, err := c.o.Directory.Host(ctx, strings.Trim(c.t.Host, "[]"), aliases...)
	if err != nil {
		return nil, err
	}
	if h == nil || !h.Found {
		s.Evidence["host"] = "no computer object"
		return nil, nil
	}
	c.host = h
	s.Evidence["host"] = h.Name
	if h.DomainController {
		s.Evidence["host_dc"] = true
	}
	s.Evidence["host_os"] = strings.TrimSpace(h.OS + " " + h.OSVersion)
	return h.Warnings, nil
}
