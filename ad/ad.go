// Package ad answers what smbcheck asks Active Directory: the state of the
// scan account (and why it cannot log on, since when, until when), the
// domain's lockout policy turned into a failure budget, the account's SIDs
// for judging a folder's ACL, and the target host's operating system.
//
// It reads AD over LDAP (go-ldap) with a read-only service account, over
// LDAPS or StartTLS unless plain LDAP is explicitly allowed. Every call opens
// its own connection, bound and closed within the caller's context.
package ad

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
)

// Config says how to reach and read the directory.
type Config struct {
	// URL of a DC: ldaps://dc1.example.com (port 636) or ldap://dc1 (port
	// 389, upgraded with StartTLS). Empty: discover DCs from the DNS SRV
	// record _ldap._tcp.<Domain> and use StartTLS on them.
	URL string
	// Domain is the DNS domain for SRV discovery (e.g. kyolab.test).
	Domain string
	// BindUser is the read-only service account: a UPN
	// (svc@example.com), DOMAIN\user or a DN. Simple bind.
	BindUser string
	Password scanwarden.Secret
	// CAFile is a PEM file of the CAs to trust for the DC's certificate;
	// empty means the system's roots.
	CAFile string
	// AllowPlain allows ldap:// without StartTLS: the service account's
	// password then crosses the network in clear. Off by default.
	AllowPlain bool
	// Timeout bounds one question (connect, bind, searches) when the
	// caller's context has no earlier deadline. Default 10 s.
	Timeout time.Duration
	// Margin is the number of failed logons kept in reserve below the
	// lockout threshold (at least 1; default 1).
	Margin int
	// Location is the time zone of dated summaries (default time.Local).
	Location *time.Location
	// Now overrides the clock (tests). By default the DC's own clock
	// (RootDSE currentTime) is used, falling back to the local one.
	Now func() time.Time
	// Resolver looks up SRV records and reverse names (default net.DefaultResolver).
	Resolver *net.Resolver
	Logger   *slog.Logger
}

// DefaultTimeout and DefaultMargin are Config's Timeout and Margin when
// left 0 (serve's [ad] defaults are these).
const (
	DefaultTimeout = 10 * time.Second
	DefaultMargin  = 1
)

// Validate names the first setting that cannot be used, as a
// *scanwarden.FieldError whose Field is the setting's key (ad.url,
// ad.domain, ad.bind_user, ad.password, ad.margin, ad.timeout): each front
// end words it its own way (a CLI flag, a config key, a form field).
func (c *Config) Validate() error {
	bad := scanwarden.BadField
	switch {
	case c.URL == "" && c.Domain == "":
		return bad("ad.url", "", "empty, and no AD domain (ad.domain) to discover a DC from")
	case strings.TrimSpace(c.BindUser) == "":
		return bad("ad.bind_user", "", "empty (a read-only service account: UPN, DOMAIN\\user or DN)")
	case c.Password.IsZero():
		return bad("ad.password", "", "empty (the service account's password)")
	case c.Margin < 0:
		return bad("ad.margin", c.Margin, "must be at least 1")
	case c.Timeout < 0:
		return bad("ad.timeout", c.Timeout, "negative")
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil {
			return bad("ad.url", c.URL, err.Error())
		}
		switch {
		case u.Scheme != "ldap" && u.Scheme != "ldaps":
			return bad("ad.url", c.URL, fmt.Sprintf("scheme %s, want ldaps:// or ldap:// (StartTLS)", u.Scheme))
		case u.Hostname() == "":
			return bad("ad.url", c.URL, "no host")
		case u.Path != "" && u.Path != "/":
			return bad("ad.url", c.URL, "a path (base DN) is not used; the base comes from the DC's RootDSE")
		}
	}
	if strings.ContainsAny(c.Domain, " /\\") {
		return bad("ad.domain", c.Domain, "not a DNS domain")
	}
	return nil
}

// Directory reads AD. It implements smbcheck.Directory and is safe for
// concurrent use: it holds no connection between questions.
type Directory struct {
	cfg   Config
	roots *x509.CertPool // nil: system roots
	log   *slog.Logger
}

var _ smbcheck.Directory = (*Directory)(nil)

// New checks cfg, loads the CA file and returns a Directory. It does not
// connect: each question does.
func New(cfg Config) (*Directory, error) {
	if cfg.Margin == 0 {
		cfg.Margin = DefaultMargin
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	d := &Directory{cfg: cfg, log: cfg.Logger}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.log = d.log.With("component", "ad")
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ad ca file: %w", err)
		}
		d.roots = x509.NewCertPool()
		if !d.roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ad ca file %s: no PEM certificate in it", cfg.CAFile)
		}
	}
	if d.Plain() {
		d.log.Warn("plain LDAP allowed: the service account's password crosses the network in clear", "url", cfg.URL)
	}
	return d, nil
}

// Plain reports whether the directory is read over unencrypted LDAP: only
// when allowed, and never for an ldaps:// URL.
func (d *Directory) Plain() bool {
	return d.cfg.AllowPlain && !strings.HasPrefix(strings.ToLower(d.cfg.URL), "ldaps://")
}

// DNSDomain is the domain's DNS name as far as it is known without asking
// the DC: the configured domain, else the DC's name less its first label
// (dc1.kyolab.test → kyolab.test), else "".
func (d *Directory) DNSDomain() string {
	if d.cfg.Domain != "" {
		return strings.ToLower(d.cfg.Domain)
	}
	u, err := url.Parse(d.cfg.URL)
	if err != nil || net.ParseIP(u.Hostname()) != nil {
		return ""
	}
	if _, rest, ok := strings.Cut(u.Hostname(), "."); ok && rest != "" {
		return strings.ToLower(rest)
	}
	return ""
}

// Into makes o's checks ask d: the directory itself, its DNS domain as the
// domain names are tried in and as the Kerberos realm, and its DC as the
// KDC when DNS names none — the one way serve and the CLI hand a directory
// to a check.
func (d *Directory) Into(o *smbcheck.Options) {
	o.Directory = d
	if dom := d.DNSDomain(); dom != "" {
		o.DNSDomains = []string{dom}
	}
	k := d.Kerberos()
	o.Realm, o.KDCs = k.Realm, k.KDCs
}

// Kerberos is where a Kerberos logon looks when the user name and DNS do
// not say: the directory's DNS domain as the realm, its DC as the KDC —
// what a check gets (Into) and a delivery's dialer too
// (smbclient.DialOptions.Kerberos).
func (d *Directory) Kerberos() smbclient.Kerberos {
	var k smbclient.Kerberos
	k.Realm = d.DNSDomain()
	if h := d.KDCHost(); h != "" {
		k.KDCs = []string{h}
	}
	return k
}

// KDCHost is the configured DC's host (from the URL), which a Kerberos
// logon asks when DNS names no KDC of the realm; "" when the DC is found
// by DNS SRV.
func (d *Directory) KDCHost() string {
	if d.cfg.URL == "" {
		return ""
	}
	u, err := url.Parse(d.cfg.URL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// Close releases the directory. Each question has its own connection, so
// there is nothing to end; it exists for the caller's defer.
func (d *Directory) Close() error { return nil }
