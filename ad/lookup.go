package ad

import (
	"fmt"
	"strings"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
)

func normWorkstation(ws string) string {
	ws = strings.ToUpper(strings.TrimSpace(ws))
	if ws == "" {
		return scanwarden.DefaultWorkstation
	}
	return ws
}

// typedName is a user name as typed on the MFP: smbcheck's one parser.
type typedName = smbclient.UserName

// parseTyped parses the typed name without its surrounding spaces, keeping
// what was typed for the answer.
func parseTyped(s string) typedName {
	t := smbclient.ParseUserName(strings.TrimSpace(s))
	t.Typed = s
	return t
}

// domainPrefix reports whether the typed prefix (DOMAIN\ or UPN suffix)
// names the directory's own domain.
func domainPrefix(t typedName, dom *domainInfo) bool {
	p := t.Prefix
	if t.Kind == "upn" {
		p = t.Suffix
	}
	return p != "" && (strings.EqualFold(p, dom.NetBIOS) || strings.EqualFold(p, dom.DNS))
}

// attempt is one search of the lookup plan.
type attempt struct {
	filter string
	how    string // MatchedBy when it finds the account
	what   string // for the evidence
}

// maxCandidates bounds a search; more than one candidate is ambiguous.
const maxCandidates = 5

func userFilter(attr, value string, prefix bool) string {
	v := ldap.EscapeFilter(value)
	if prefix {
		v += "@*"
	}
	return "(&(objectClass=user)(!(objectClass=computer))(" + attr + "=" + v + "))"
}

// lookupPlan lists the searches for a typed name, in order; every value is
// escaped, so a name like *)(cn=* finds nothing.
func lookupPlan(t typedName, dom *domainInfo) []attempt {
	switch t.Kind {
	case "invalid":
		return nil
	case "upn":
		plan := []attempt{{userFilter("userPrincipalName", t.User+"@"+t.Suffix, false), "userPrincipalName", "userPrincipalName=" + t.User + "@" + t.Suffix}}
		if domainPrefix(t, dom) {
			plan = append(plan, attempt{userFilter("sAMAccountName", t.User, false), "implicit-upn", "sAMAccountName=" + t.User})
		}
		return plan
	case "bare":
		return []attempt{
			{userFilter("sAMAccountName", t.User, false), "sAMAccountName", "sAMAccountName=" + t.User},
			{userFilter("userPrincipalName", t.User, true), "upn-prefix", "userPrincipalName=" + t.User + "@*"},
		}
	}
	return []attempt{{userFilter("sAMAccountName", t.User, false), "sAMAccountName", "sAMAccountName=" + t.User}}
}

// notFound is the answer when no single account has the typed name.
func notFound(t typedName, ws string, dom *domainInfo, entries []*ldap.Entry, tried []string) *User {
	u := &User{Typed: t.Typed, Workstation: ws, NetBIOSDomain: dom.NetBIOS, DNSDomain: dom.DNS,
		Cause: scanwarden.CauseUnknownUser, Causes: []scanwarden.Cause{scanwarden.CauseUnknownUser}, Budget: -1,
		Workstations: []string{}, Groups: []string{}, SIDs: []string{}, Evidence: smbcheck.Evidence{}}
	u.Policy = dom.Policy.evidence()
	u.LockoutThreshold = dom.Policy.Threshold
	switch {
	case t.Kind == "invalid":
		u.Summary = fmt.Sprintf("%s is not a user name in any form Windows accepts (user, DOMAIN\\user, user@domain)", t.Typed)
		u.Certain = true
	case len(entries) > 1:
		var names []string
		for _, e := range entries {
			names = append(names, e.GetAttributeValue("sAMAccountName")+" ("+e.GetAttributeValue("userPrincipalName")+")")
		}
		u.Summary = fmt.Sprintf("the user name %s matches more than one account of %s by UPN prefix: %s", t.Typed, dom.NetBIOS, strings.Join(names, ", "))
		u.Evidence["candidates"] = names
	default:
		u.Summary = fmt.Sprintf("no account of %s (%s) has the name %s (searched %s)", dom.NetBIOS, dom.DNS, t.Typed, strings.Join(tried, ", "))
		// A name qualified with the domain is the domain's to answer; a
		// bare, .\ or HOST\ name may still be a local account of the
		// target server.
		u.Certain = domainPrefix(t, dom)
		if !u.Certain {
			u.Summary += "; it may still be a local account of the target server"
		}
	}
	u.Fix = scanwarden.CauseUnknownUser.Info().Fix
	return u
}
