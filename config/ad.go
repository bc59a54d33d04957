package config

import (
	"net/url"
	"strconv"
	"time"

	"github.com/scanwarden/scanwarden"
)

// AD is [ad]; off while url is empty.
type AD struct {
	URL           string   `toml:"url"`            // the DC: ldaps://dc1.example.com, or ldap://dc1 (StartTLS); "" = Active Directory not asked
	BindUser      string   `toml:"bind_user"`      // the read-only service account that reads accounts and policy
	PasswordFile  string   `toml:"password_file"`  // file holding bind_user's password
	CA            string   `toml:"ca"`             // PEM file of the CA that signed the DC's certificate ("" = the system's)
	InsecurePlain bool     `toml:"insecure_plain"` // allow a plain LDAP bind without TLS (lab only)
	Margin        int      `toml:"margin"`         // failed logons kept in reserve below the domain's lockout threshold (1..5)
	Timeout       Duration `toml:"timeout"`        // per LDAP request

	Password scanwarden.Secret `toml:"-"`
}

// validate checks [ad].
func (a AD) validate(bad badValue) {
	if a.URL != "" {
		u, err := url.Parse(a.URL)
		if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
			bad("ad.url", strconv.Quote(a.URL), "want ldaps://HOST or ldap://HOST")
		}
		if a.BindUser == "" {
			bad("ad.bind_user", `""`, "needed with ad.url")
		}
		if a.PasswordFile == "" && a.Password.IsZero() {
			bad("ad.password_file", `""`, "needed with ad.url")
		}
	}
	if a.Margin < 1 || a.Margin > 5 {
		bad("ad.margin", a.Margin, "1..5 (failed logons kept in reserve below the lockout threshold)")
	}
	if a.Timeout.D() < time.Second {
		bad("ad.timeout", a.Timeout.D(), "at least 1s")
	}
}
