package smbcheck

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// searchDomains reads the search list of a resolv.conf file.
func searchDomains(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "search":
			out = fields[1:]
		case "domain":
			if out == nil {
				out = fields[1:2]
			}
		}
	}
	return out
}

// sortAddrs puts IPv4 first, as an MFP's stack prefers it.
func sortAddrs(addrs []string) {
	sort.SliceStable(addrs, func(i, j int) bool {
		a, b := net.ParseIP(addrs[i]), net.ParseIP(addrs[j])
		return a.To4() != nil && b.To4() == nil
	})
}

// stepName resolves the host as the MFP would, and says when a bare name
// resolves only through this machine's DNS search list.
// nameStep resolves the host name as the MFP would (its addresses, for
// the tcp step).
type nameStep struct{ *checker }

func (nameStep) ids() []string { return []string{StepName} }

func (c nameStep) run(ctx context.Context) bool {
	c.addrs = c.stepName(ctx)
	return c.addrs != nil
}

func (c nameStep) stepName(ctx context.Context) []string {
	s := c.begin(StepName)
	host := c.t.Host
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		s.Evidence["addresses"] = []string{ip.String()}
		c.ok(s, "an address is stored, no name to resolve")
		return []string{ip.String()}
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	addrs, err := c.o.Resolver.LookupHost(ctx, host)
	if err == nil && len(addrs) > 0 {
		sortAddrs(addrs)
		s.Evidence["addresses"] = addrs
		if !strings.Contains(strings.TrimSuffix(host, "."), ".") {
			if _, err := c.o.Resolver.LookupHost(ctx, host+"."); err != nil {
				suffix := ""
				for _, d := range searchDomains(c.o.resolvConf) {
					if _, err := c.o.Resolver.LookupHost(ctx, host+"."+strings.Trim(d, ".")+"."); err == nil {
						suffix = strings.Trim(d, ".")
						break
					}
				}
				s.Evidence["bare_name_resolves"] = false
				if suffix != "" {
					s.Evidence["resolved_as"] = host + "." + suffix
					msg := fmt.Sprintf("%s resolves only as %s.%s, through this machine's DNS search list: the MFP needs the DNS domain %s in its TCP/IP settings, or store the full name %s.%s",
						host, host, suffix, suffix, host, suffix)
					c.warnAction(s, msg, msg)
				} else {
					msg := fmt.Sprintf("%s resolves only through this machine's DNS search list: make sure the MFP has the same DNS domain, or store the full name", host)
					c.warnAction(s, msg, msg)
				}
				return addrs
			}
		}
		c.ok(s, fmt.Sprintf("%s → %s", host, strings.Join(addrs, ", ")))
		return addrs
	}
	if err == nil {
		err = fmt.Errorf("lookup %s: no addresses", host)
	}
	cause, ev := classify(StepName, err)
	if cause != scanwarden.CauseNameUnresolved {
		cause = scanwarden.CauseNameUnresolved
	}
	for k, v := range ev {
		s.Evidence[k] = v
	}
	// A bare name that resolves under a known domain: tell which full name to store.
	if !strings.Contains(host, ".") {
		for _, d := range c.o.DNSDomains {
			fq := host + "." + strings.Trim(d, ".")
			if a, err := c.o.Resolver.LookupHost(ctx, fq+"."); err == nil && len(a) > 0 {
				s.Evidence["resolves_as"] = fq
				c.fail(s, cause, fmt.Sprintf("%s does not resolve, but %s does (%s)", host, fq, strings.Join(a, ", ")),
					fmt.Sprintf("Store the full name %s (or the address %s) as the destination's Host Name on the MFP.", fq, a[0]))
				return nil
			}
		}
	}
	// Not in DNS: does a PC's way (NetBIOS, LLMNR) find it?
	if r, found := (nameStep{c.checker}).askLocal(ctx, s, host, err); found {
		c.failNotInDNS(ctx, s, host, r)
		return nil
	}
	detail := fmt.Sprintf("%s does not resolve", host)
	if dnsErr := (*net.DNSError)(nil); errors.As(err, &dnsErr) && dnsErr.IsTimeout {
		detail = fmt.Sprintf("%s: the DNS server did not answer", host)
	}
	c.fail(s, cause, detail, "")
	return nil
}
