package ad

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// domainInfo is what every question needs to know of the domain.
type domainInfo struct {
	BaseDN   string // defaultNamingContext
	ConfigDN string // configurationNamingContext
	DNS      string // DNS name, e.g. kyolab.test
	NetBIOS  string // NetBIOS name, e.g. KYOLAB
	DCHost   string // the DC's dnsHostName
	DCTime   time.Time
	Policy   policy
}

// policy is the lockout and password policy that applies to an account:
// the domain's, or a fine-grained one (PSO).
type policy struct {
	Threshold      int           // lockoutThreshold; 0: no lockout
	Duration       time.Duration // lockoutDuration
	UntilUnlocked  bool          // lockoutDuration "forever": an admin must unlock
	Window         time.Duration // lockOutObservationWindow
	MaxPwdAge      time.Duration // maxPwdAge
	PwdNeverExpire bool          // maxPwdAge 0 or "never"
	Source         string        // "domain" or the PSO's DN
}

// policyAttrs are the domain object's policy attributes, and the PSO's.
var (
	domainPolicyAttrs = []string{"lockoutThreshold", "lockoutDuration", "lockOutObservationWindow", "maxPwdAge"}
	psoPolicyAttrs    = []string{"msDS-LockoutThreshold", "msDS-LockoutDuration", "msDS-LockoutObservationWindow", "msDS-MaximumPasswordAge"}
)

// parsePolicy reads a policy from the domain object (names = the domain
// attributes) or a PSO (names = the msDS- attributes).
func parsePolicy(e *ldap.Entry, names []string, source string) (policy, error) {
	p := policy{Source: source}
	get := func(name string) (int64, bool, error) {
		s := e.GetAttributeValue(name)
		if s == "" {
			return 0, false, nil
		}
		v, err := parseInt64(name, s)
		return v, err == nil, err
	}
	th, ok, err := get(names[0])
	if err != nil {
		return p, err
	}
	if ok {
		if th < 0 || th > 1<<16 {
			return p, fmt.Errorf("%s %d: out of range", names[0], th)
		}
		p.Threshold = int(th)
	}
	if v, ok, err := get(names[1]); err != nil {
		return p, err
	} else if ok {
		p.Duration, p.UntilUnlocked = unbounded(v)
	}
	if v, ok, err := get(names[2]); err != nil {
		return p, err
	} else if ok {
		p.Window, _ = interval(v)
	}
	if v, ok, err := get(names[3]); err != nil {
		return p, err
	} else if ok {
		p.MaxPwdAge, p.PwdNeverExpire = unbounded(v)
	} else {
		p.PwdNeverExpire = true
	}
	return p, nil
}

// evidence renders the policy for a report.
func (p policy) evidence() map[string]any {
	ev := map[string]any{"lockout_threshold": p.Threshold, "source": p.Source}
	if p.UntilUnlocked {
		ev["lockout_duration"] = "until an administrator unlocks"
	} else {
		ev["lockout_duration"] = p.Duration.String()
	}
	ev["observation_window"] = p.Window.String()
	if p.PwdNeverExpire {
		ev["max_password_age"] = "never"
	} else {
		ev["max_password_age"] = p.MaxPwdAge.String()
	}
	return ev
}

// domain reads the RootDSE, the domain object's policy and the domain's
// NetBIOS name from the Partitions container.
// connectDomain connects, binds and reads the domain's names and policy;
// the caller closes the session.
func (d *Directory) connectDomain(ctx context.Context) (*session, *domainInfo, error) {
	s, err := d.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	dom, err := s.domain()
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, dom, nil
}

func (s *session) domain() (*domainInfo, error) {
	root, err := s.base("read RootDSE", "", "defaultNamingContext", "configurationNamingContext", "dnsHostName", "currentTime")
	if err != nil {
		return nil, err
	}
	if root == nil || root.GetAttributeValue("defaultNamingContext") == "" {
		return nil, fmt.Errorf("read RootDSE on DC %s: no defaultNamingContext (not an AD DC?)", s.ep.addr())
	}
	dom := &domainInfo{
		BaseDN:   root.GetAttributeValue("defaultNamingContext"),
		ConfigDN: root.GetAttributeValue("configurationNamingContext"),
		DCHost:   root.GetAttributeValue("dnsHostName"),
		DNS:      dnsFromDN(root.GetAttributeValue("defaultNamingContext")),
	}
	if t, err := generalizedTime(root.GetAttributeValue("currentTime")); err == nil {
		dom.DCTime = t
	}
	de, err := s.base("read the domain's policy", dom.BaseDN, domainPolicyAttrs...)
	if err != nil {
		return nil, err
	}
	if de == nil {
		return nil, fmt.Errorf("read the domain's policy on DC %s: %s not found", s.ep.addr(), dom.BaseDN)
	}
	if dom.Policy, err = parsePolicy(de, domainPolicyAttrs, "domain"); err != nil {
		return nil, fmt.Errorf("domain policy: %w", err)
	}
	if dom.ConfigDN != "" {
		req := ldap.NewSearchRequest("CN=Partitions,"+dom.ConfigDN, ldap.ScopeSingleLevel, ldap.NeverDerefAliases, 2, 0, false,
			"(&(objectClass=crossRef)(nCName="+ldap.EscapeFilter(dom.BaseDN)+"))", []string{"nETBIOSName", "dnsRoot"}, nil)
		res, err := s.search("read the domain's NetBIOS name", req)
		if err != nil {
			return nil, err
		}
		if len(res.Entries) > 0 {
			dom.NetBIOS = res.Entries[0].GetAttributeValue("nETBIOSName")
			if r := res.Entries[0].GetAttributeValue("dnsRoot"); r != "" {
				dom.DNS = r
			}
		}
	}
	return dom, nil
}

// dnsFromDN turns DC=kyolab,DC=test into kyolab.test.
func dnsFromDN(dn string) string {
	p, err := ldap.ParseDN(dn)
	if err != nil {
		return ""
	}
	var out string
	for _, rdn := range p.RDNs {
		for _, a := range rdn.Attributes {
			if strings.EqualFold(a.Type, "DC") {
				if out != "" {
					out += "."
				}
				out += a.Value
			}
		}
	}
	return out
}

// psoPolicy reads the fine-grained policy an account is subject to.
func (s *session) psoPolicy(dn string) (policy, error) {
	e, err := s.base("read the account's password settings object", dn, psoPolicyAttrs...)
	if err != nil {
		return policy{}, err
	}
	if e == nil || e.GetAttributeValue(psoPolicyAttrs[0]) == "" {
		return policy{}, fmt.Errorf("password settings object %s: not readable by the service account", dn)
	}
	return parsePolicy(e, psoPolicyAttrs, dn)
}
