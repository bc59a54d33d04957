package ad

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden/smbconn"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// Computer is what AD says of the target host: the `ad host --json` answer.
type Computer struct {
	Name          string `json:"name"` // as asked
	Found         bool   `json:"found"`
	DN            string `json:"dn,omitempty"`
	SAM           string `json:"sam,omitempty"`
	DNSHostName   string `json:"dns_host_name,omitempty"`
	OS            string `json:"os"`
	OSVersion     string `json:"os_version"`
	Build         int    `json:"build,omitempty"`
	ClientEdition bool   `json:"client_edition"`
	// DomainController is true for a DC's computer object
	// (userAccountControl SERVER_TRUST_ACCOUNT): on a DC, .\user and
	// HOST\user are domain accounts.
	DomainController bool              `json:"domain_controller"`
	Summary          string            `json:"summary"`
	Warnings         []string          `json:"warnings"`
	Evidence         smbcheck.Evidence `json:"evidence"`
}

// Host implements smbcheck.Directory.
func (d *Directory) Host(ctx context.Context, name string, aliases ...string) (*smbcheck.Host, error) {
	c, err := d.Computer(ctx, name, aliases...)
	if err != nil {
		return nil, err
	}
	return &smbcheck.Host{Found: c.Found, Name: c.hostName(), OS: c.OS, OSVersion: c.OSVersion,
		DomainController: c.DomainController, Warnings: c.Warnings, Evidence: c.Evidence}, nil
}

func (c *Computer) hostName() string {
	if c.DNSHostName != "" {
		return c.DNSHostName
	}
	if c.SAM != "" {
		return strings.TrimSuffix(c.SAM, "$")
	}
	return c.Name
}

var computerAttrs = []string{"cn", "sAMAccountName", "dNSHostName", "operatingSystem", "operatingSystemVersion", "operatingSystemServicePack", "userAccountControl"}

// uacServerTrust marks a domain controller's computer account.
const uacServerTrust = 0x2000

// Computer looks up the computer object of a host by DNS name, NetBIOS name
// or (through reverse DNS) address — or by any of its aliases, in the same
// search — and warns about what its operating system means for scanning to
// it.
func (d *Directory) Computer(ctx context.Context, name string, aliases ...string) (*Computer, error) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	c := &Computer{Name: name, Warnings: []string{}, Evidence: smbcheck.Evidence{}}
	clean := func(n string) string { return strings.TrimSuffix(strings.TrimLeft(strings.TrimSpace(n), `\/`), ".") }
	names := []string{clean(name)}
	if ip := net.ParseIP(names[0]); ip != nil {
		names = names[:0]
		ptr, err := d.cfg.Resolver.LookupAddr(ctx, ip.String())
		if err != nil || len(ptr) == 0 {
			if err != nil {
				c.Evidence["reverse_dns"] = err.Error()
			}
			if len(aliases) == 0 {
				c.Summary = fmt.Sprintf("%s is an address without a reverse DNS name: its computer object cannot be found", name)
				return c, nil
			}
		}
		for _, p := range ptr {
			names = append(names, strings.TrimSuffix(p, "."))
		}
		if len(names) > 0 {
			c.Evidence["reverse_dns"] = slices.Clone(names)
		}
	}
	for _, a := range aliases {
		if a = clean(a); a != "" && !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, a) }) {
			names = append(names, a)
		}
	}
	if len(names) == 0 || names[0] == "" {
		return nil, fmt.Errorf("ad host: empty name")
	}

	s, dom, err := d.connectDomain(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	c.Evidence["dc"], c.Evidence["transport"] = s.ep.addr(), s.transport
	filter := computerFilter(names)
	c.Evidence["filter"] = filter
	req := ldap.NewSearchRequest(dom.BaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, maxCandidates, 0, false,
		filter, computerAttrs, nil)
	res, err := s.search("find the computer", req)
	if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
		return nil, err
	}
	if res == nil || len(res.Entries) == 0 {
		c.Summary = fmt.Sprintf("no computer object for %s in %s: not a domain member (or another domain's)", name, dom.DNS)
		return c, nil
	}
	e := pickComputer(res.Entries, names)
	c.fill(e)
	return c, nil
}

// computerFilter matches a computer by any of its names, escaped.
func computerFilter(names []string) string {
	var b strings.Builder
	b.WriteString("(&(objectClass=computer)(|")
	for _, n := range names {
		label, _, _ := strings.Cut(n, ".")
		fmt.Fprintf(&b, "(dNSHostName=%s)(cn=%s)(sAMAccountName=%s$)", ldap.EscapeFilter(n), ldap.EscapeFilter(label), ldap.EscapeFilter(label))
	}
	b.WriteString("))")
	return b.String()
}

// pickComputer prefers the object whose dNSHostName is the name asked.
func pickComputer(entries []*ldap.Entry, names []string) *ldap.Entry {
	for _, e := range entries {
		for _, n := range names {
			if strings.EqualFold(e.GetAttributeValue("dNSHostName"), n) {
				return e
			}
		}
	}
	return entries[0]
}

func (c *Computer) fill(e *ldap.Entry) {
	c.Found = true
	c.DN = e.DN
	c.SAM = e.GetAttributeValue("sAMAccountName")
	c.DNSHostName = e.GetAttributeValue("dNSHostName")
	c.OS = e.GetAttributeValue("operatingSystem")
	c.OSVersion = e.GetAttributeValue("operatingSystemVersion")
	c.Build = osBuild(c.OSVersion)
	if uac, err := strconv.ParseUint(e.GetAttributeValue("userAccountControl"), 10, 32); err == nil {
		c.DomainController = uac&uacServerTrust != 0
	}
	for _, a := range computerAttrs {
		if v := e.GetAttributeValue(a); v != "" {
			c.Evidence[a] = v
		}
	}
	c.ClientEdition, c.Warnings = osWarnings(c.hostName(), c.OS, c.Build)
	if c.Warnings == nil {
		c.Warnings = []string{}
	}
	switch {
	case c.OS == "":
		c.Summary = fmt.Sprintf("%s is a domain member; its operating system is not recorded", c.hostName())
	case c.OSVersion == "":
		c.Summary = fmt.Sprintf("%s runs %s", c.hostName(), c.OS)
	default:
		c.Summary = fmt.Sprintf("%s runs %s %s", c.hostName(), c.OS, c.OSVersion)
	}
}

// osBuild reads the build from an operatingSystemVersion like "10.0 (26100)".
func osBuild(v string) int {
	_, rest, ok := strings.Cut(v, "(")
	if !ok {
		return 0
	}
	digits := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		digits = rest[:i]
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0
	}
	return n
}

// osWarnings says what a host's operating system means for scanning to it:
// a Windows client edition accepts 20 inbound sessions; Windows 11 24H2 and
// later require SMB signing and refuse guest logons by default.
func osWarnings(host, osName string, build int) (client bool, warnings []string) {
	w := smbconn.JudgeWindows(osName, 10, 0, build)
	if !w.Client {
		return false, nil
	}
	lower := strings.ToLower(osName)
	warnings = append(warnings, fmt.Sprintf("%s runs %s, a client edition: it accepts at most 20 inbound SMB sessions, and idle sessions of other PCs can make the MFP fail with 1102 — lower AutoDisconnect (net config server /autodisconnect:5) or move the scan folder to a server", host, osName))
	switch {
	case w.Strict:
		warnings = append(warnings, fmt.Sprintf("%s is Windows 11 24H2 or later (build %d): SMB signing is required and guest logons are off by default — an MFP that does not sign, or that logs on as guest, fails with 1102: update the MFP firmware (SMB signing) and use a domain account", host, build))
	case build == 0 && strings.Contains(lower, "windows 11"):
		warnings = append(warnings, fmt.Sprintf("%s runs Windows 11 of an unknown build: from 24H2 (build 26100) on it requires SMB signing and refuses guest logons", host))
	}
	return true, warnings
}
