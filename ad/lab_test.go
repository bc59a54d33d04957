package ad

// Tests against the lab's Samba AD DC (testlab/README.md). Run them with
//
//	testlab/lab exec go test ./ad/ -run Lab -v
//
// Wrong passwords count toward the lab's lockout (threshold 3): only the
// badpw* users get them, at most one per account per run, and a good bind
// resets the count afterwards.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// labDir is a Directory on the lab DC over LDAPS with the read-only account.
func labDir(t *testing.T, lab *testlab.Lab, mod func(c *Config)) *Directory {
	t.Helper()
	cfg := Config{URL: "ldaps://" + lab.DCIP, BindUser: "ldapreader@" + lab.DNSDomain,
		Password: scanwarden.NewSecret(lab.Password), CAFile: lab.CA, Timeout: 10 * time.Second, Location: time.UTC}
	if mod != nil {
		mod(&cfg)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLabAccountStates(t *testing.T) {
	lab := testlab.Require(t)
	d := labDir(t, lab, nil)
	ctx := context.Background()
	tests := []struct {
		typed, ws string
		cause     scanwarden.Cause
		certain   bool
		how       string
		summary   []string
		check     func(t *testing.T, u *User)
	}{
		{typed: "alice", cause: scanwarden.CauseOK, how: "sAMAccountName", summary: []string{`KYOLAB\alice can log on now`, "of 3 bad attempts"},
			check: func(t *testing.T, u *User) {
				if !slices.Contains(u.Groups, "scanners") || len(u.SIDs) < 3 || !strings.HasPrefix(u.SIDs[0], "S-1-5-21-") || u.SIDs[0] != u.Evidence["objectSid"] {
					t.Errorf("groups %v SIDs %v", u.Groups, u.SIDs)
				}
				if !slices.ContainsFunc(u.SIDs, func(s string) bool { return strings.HasSuffix(s, "-513") }) {
					t.Errorf("no Domain Users in %v", u.SIDs)
				}
				if u.UPN != "alice@kyolab.test" || u.NetBIOSDomain != "KYOLAB" || u.DNSDomain != "kyolab.test" || u.PasswordExpires == nil {
					t.Errorf("%+v", u)
				}
				if u.Budget != budget(3, u.BadPwdCount, 1, false) || u.LockoutThreshold != 3 {
					t.Errorf("budget %d with %d bad passwords", u.Budget, u.BadPwdCount)
				}
				if u.BadPwdCount != 0 {
					t.Errorf("alice has %d bad passwords: some test spent alice's lockout budget", u.BadPwdCount)
				}
			}},
		{typed: "dave", cause: scanwarden.CauseAccountDisabled, certain: true, summary: []string{`KYOLAB\dave is disabled`}},
		{typed: "erin", cause: scanwarden.CauseAccountLocked, certain: true, summary: []string{`KYOLAB\erin is locked out since`, "bad attempts (threshold 3), unlocks"},
			check: func(t *testing.T, u *User) {
				if !u.Locked || u.LockedUntil == nil || u.LockedSince == nil || u.LockedUntil.Sub(*u.LockedSince) != 30*time.Minute || u.Budget != 0 {
					t.Errorf("locked %v since %v until %v budget %d", u.Locked, u.LockedSince, u.LockedUntil, u.Budget)
				}
			}},
		{typed: "frank", cause: scanwarden.CausePasswordMustChange, certain: true, summary: []string{"must change its password at next logon"}},
		{typed: "grace", cause: scanwarden.CausePasswordExpired, certain: true, summary: []string{"the password of KYOLAB\\grace expired on", "maximum age 30 days"}},
		{typed: "heidi", cause: scanwarden.CauseAccountExpired, certain: true, summary: []string{`KYOLAB\heidi expired on`}},
		{typed: "ivan", cause: scanwarden.CauseWorkstationRestricted, certain: true, summary: []string{"may log on only to MFP01 — the MFP sends SCANWARDEN"}},
		{typed: "ivan", ws: "mfp01", cause: scanwarden.CauseOK, summary: []string{"may log on only to MFP01 (the MFP sends MFP01)"}},
		{typed: "judy", cause: scanwarden.CauseLogonHours, certain: true, summary: []string{"may not log on at this hour", "allow no hour at all"}},
		{typed: "jdoe", cause: scanwarden.CauseOK, how: "sAMAccountName"},
		{typed: "john.doe", cause: scanwarden.CauseOK, how: "upn-prefix", summary: []string{`the user name john.doe is not a sAMAccountName: it matched the UPN prefix of KYOLAB\jdoe (john.doe@kyolab.test)`}},
		{typed: "john.doe@kyolab.test", cause: scanwarden.CauseOK, how: "userPrincipalName"},
		{typed: "jdoe@kyolab.test", cause: scanwarden.CauseOK, how: "implicit-upn"},
		{typed: `KYOLAB\alice`, cause: scanwarden.CauseOK, how: "sAMAccountName"},
		{typed: `kyolab\ALICE`, cause: scanwarden.CauseOK, how: "sAMAccountName"},
		{typed: `.\alice`, cause: scanwarden.CauseOK, how: "sAMAccountName"},
		{typed: "alice@kyolab.test", cause: scanwarden.CauseOK, how: "userPrincipalName"},
		{typed: `SCANPC\alice`, cause: scanwarden.CauseOK, how: "sAMAccountName",
			check: func(t *testing.T, u *User) {
				if u.Evidence["typed_domain_note"] == nil {
					t.Error("no note that SCANPC is not the domain")
				}
			}},
		{typed: "nosuch", cause: scanwarden.CauseUnknownUser, summary: []string{"no account of KYOLAB", "local account"}},
		{typed: `KYOLAB\nosuch`, cause: scanwarden.CauseUnknownUser, certain: true},
		{typed: "john.doe@other.test", cause: scanwarden.CauseUnknownUser},
		// Escaping: each would match accounts if pasted into the filter.
		{typed: "*)(cn=*", cause: scanwarden.CauseUnknownUser, summary: []string{"no account"}},
		{typed: "*", cause: scanwarden.CauseUnknownUser, summary: []string{"no account"}},
		{typed: "ali*", cause: scanwarden.CauseUnknownUser, summary: []string{"no account"}},
		{typed: "*)(|(sAMAccountName=alice", cause: scanwarden.CauseUnknownUser, summary: []string{"no account"}},
		{typed: `KYOLAB\*`, cause: scanwarden.CauseUnknownUser, certain: true, summary: []string{"no account"}},
		{typed: "*@kyolab.test", cause: scanwarden.CauseUnknownUser, certain: true, summary: []string{"no account"}},
	}
	for _, tc := range tests {
		t.Run(tc.typed+"/"+tc.ws, func(t *testing.T) {
			u, err := d.User(ctx, tc.typed, tc.ws)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s — %s (budget %d)", tc.typed, u.Cause, u.Summary, u.Budget)
			if u.Cause != tc.cause || u.Certain != tc.certain {
				t.Errorf("cause %s certain %v; want %s %v", u.Cause, u.Certain, tc.cause, tc.certain)
			}
			if tc.how != "" && u.MatchedBy != tc.how {
				t.Errorf("matched by %q, want %q", u.MatchedBy, tc.how)
			}
			for _, s := range tc.summary {
				if !strings.Contains(u.Summary, s) {
					t.Errorf("summary %q lacks %q", u.Summary, s)
				}
			}
			if u.Found != (tc.cause != scanwarden.CauseUnknownUser) {
				t.Errorf("found %v", u.Found)
			}
			if tc.check != nil {
				tc.check(t, u)
			}
			a, err := d.Account(ctx, tc.typed, tc.ws)
			if err != nil || a.Cause != u.Cause || a.Found != u.Found {
				t.Errorf("Account() = %+v, %v", a, err)
			}
		})
	}
}

func TestLabTransports(t *testing.T) {
	lab := testlab.Require(t)
	tests := []struct {
		name      string
		mod       func(c *Config)
		transport string
		dc        string
	}{
		{"ldaps by address", nil, "ldaps", lab.DCIP + ":636"},
		{"ldaps by name", func(c *Config) { c.URL = "ldaps://" + lab.DCHost }, "ldaps", lab.DCHost + ":636"},
		{"StartTLS", func(c *Config) { c.URL = "ldap://" + lab.DCHost }, "starttls", lab.DCHost + ":389"},
		{"SRV discovery", func(c *Config) { c.URL, c.Domain = "", lab.DNSDomain }, "starttls", lab.DCHost + ":389"},
		{"bind as DOMAIN\\user", func(c *Config) { c.BindUser = lab.Domain + `\ldapreader` }, "ldaps", lab.DCIP + ":636"},
		{"bind as DN", func(c *Config) { c.BindUser = "CN=ldapreader,CN=Users,DC=kyolab,DC=test" }, "ldaps", lab.DCIP + ":636"},
		{"plain, allowed", func(c *Config) { c.URL, c.AllowPlain = "ldap://"+lab.DCIP, true }, "plain", lab.DCIP + ":389"},
		{"ldaps with plain allowed stays TLS", func(c *Config) { c.AllowPlain = true }, "ldaps", lab.DCIP + ":636"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := labDir(t, lab, tc.mod)
			u, err := d.User(context.Background(), "alice", "")
			if err != nil {
				t.Fatal(err)
			}
			if u.Evidence["transport"] != tc.transport || !strings.EqualFold(u.Evidence["dc"].(string), tc.dc) || u.Cause != scanwarden.CauseOK {
				t.Errorf("transport %v dc %v cause %s; want %s %s ok", u.Evidence["transport"], u.Evidence["dc"], u.Cause, tc.transport, tc.dc)
			}
		})
	}
}

// otherCA writes a CA certificate that did not sign the DC's.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "not the lab CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLabTLSVerify(t *testing.T) {
	lab := testlab.Require(t)
	wrong := otherCA(t)
	tests := []struct {
		name string
		mod  func(c *Config)
		want []string
	}{
		{"ldaps, wrong CA", func(c *Config) { c.CAFile = wrong }, []string{"TLS with DC " + lab.DCIP + ":636", "not signed by a CA in " + wrong}},
		{"StartTLS, wrong CA", func(c *Config) { c.URL, c.CAFile = "ldap://"+lab.DCHost, wrong }, []string{"TLS with DC " + lab.DCHost + ":389", "(ad.ca)"}},
		{"ldaps, system roots", func(c *Config) { c.CAFile = "" }, []string{lab.DCIP, "the system's roots"}},
		// A DC found through DNS SRV is verified under its own name against
		// the given CA like any other.
		{"SRV discovery, wrong CA", func(c *Config) { c.URL, c.Domain, c.CAFile = "", lab.DNSDomain, wrong }, []string{"TLS with DC " + lab.DCHost + ":389", "(ad.ca)"}},
		{"ldaps on the StartTLS port", func(c *Config) { c.URL = "ldaps://" + lab.DCIP + ":389" }, []string{"TLS with DC " + lab.DCIP + ":389", "ldaps:// is port 636"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := labDir(t, lab, tc.mod)
			_, err := d.User(context.Background(), "alice", "")
			if err == nil {
				t.Fatal("no error: the certificate was not verified")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), lab.Password) {
				t.Errorf("error holds the password")
			}
			t.Logf("%v", err)
		})
	}
}

func TestLabDCDown(t *testing.T) {
	lab := testlab.Require(t)
	tests := []struct {
		name  string
		mod   func(c *Config)
		cause scanwarden.Cause
		want  string
	}{
		{"nothing listens", func(c *Config) { c.URL = "ldaps://" + lab.GhostIP }, scanwarden.CauseHostUnreachable, "connect to DC " + lab.GhostIP + ":636"},
		{"nothing listens, StartTLS", func(c *Config) { c.URL = "ldap://" + lab.GhostIP }, scanwarden.CauseHostUnreachable, "connect to DC " + lab.GhostIP + ":389"},
		{"no SRV record", func(c *Config) { c.URL, c.Domain = "", "nosuch."+lab.DNSDomain }, scanwarden.CauseNameUnresolved, "SRV _ldap._tcp.nosuch." + lab.DNSDomain},
		{"DC name does not resolve", func(c *Config) { c.URL = "ldaps://nosuchhost." + lab.DNSDomain }, scanwarden.CauseNameUnresolved, "nosuchhost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := labDir(t, lab, tc.mod)
			start := time.Now()
			_, err := d.User(context.Background(), "alice", "")
			el := time.Since(start)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("%s: %v [%s]", el.Round(time.Millisecond), err, Classify(err))
			if Classify(err) != tc.cause || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("cause %s, error %q; want %s and %q", Classify(err), err, tc.cause, tc.want)
			}
			if el > 3*time.Second {
				t.Errorf("took %s", el)
			}
			if _, err := d.Host(context.Background(), "dc1"); err == nil {
				t.Error("Host answered without a DC")
			}
		})
	}
}

// bindAs binds once as user with password and returns the bind error.
func bindAs(t *testing.T, lab *testlab.Lab, user, password string) error {
	t.Helper()
	d := labDir(t, lab, func(c *Config) { c.BindUser, c.Password = user, scanwarden.NewSecret(password) })
	s, err := d.connect(context.Background())
	if err == nil {
		s.close()
	}
	return err
}

// TestLabBindSubCodes binds as each account with its right password (which
// never counts as a bad one) and maps the DC's sub-code to the account's cause.
func TestLabBindSubCodes(t *testing.T) {
	lab := testlab.Require(t)
	tests := []struct {
		user  string
		cause scanwarden.Cause
	}{
		{"alice", scanwarden.CauseOK},
		{"dave", scanwarden.CauseAccountDisabled},
		{"erin", scanwarden.CauseAccountLocked},
		{"frank", scanwarden.CausePasswordMustChange},
		{"grace", scanwarden.CausePasswordExpired},
		{"heidi", scanwarden.CauseAccountExpired},
		{"judy", scanwarden.CauseLogonHours},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			err := bindAs(t, lab, tc.user+"@"+lab.DNSDomain, lab.Password)
			c, sub := BindCause(err)
			if err == nil {
				c = scanwarden.CauseOK
			}
			t.Logf("%-6s sub-code %-4q → %s (%v)", tc.user, sub, c, err)
			if c != tc.cause {
				t.Errorf("bind as %s: %s (%v), want %s", tc.user, c, err, tc.cause)
			}
			var be *BindError
			if err != nil && (!errors.As(err, &be) || be.SubCode == "" || be.Code != ldap.LDAPResultInvalidCredentials) {
				t.Errorf("not a BindError with a sub-code: %#v", err)
			}
		})
	}
	// ivan may log on only to MFP01. An LDAP simple bind names no
	// workstation; Samba 4.17 then answers 531 (measured here).
	err := bindAs(t, lab, "ivan@"+lab.DNSDomain, lab.Password)
	c, sub := BindCause(err)
	t.Logf("ivan   sub-code %-4q → %s (%v)", sub, c, err)
	if c != scanwarden.CauseWorkstationRestricted || sub != "531" {
		t.Errorf("ivan: %s %q, want workstation-restricted 531", c, sub)
	}

	// A wrong password, on a badpw user (one failure, reset below).
	err = bindAs(t, lab, "badpw8@"+lab.DNSDomain, "wrong-"+lab.Password)
	c, sub = BindCause(err)
	t.Logf("badpw8 wrong password: sub-code %q → %s", sub, c)
	if c != scanwarden.CauseBadCredentials || sub != "52e" {
		t.Errorf("wrong password: %s %q (%v)", c, sub, err)
	}
	if err := bindAs(t, lab, "badpw8@"+lab.DNSDomain, lab.Password); err != nil {
		t.Errorf("good bind to reset badpw8: %v", err)
	}
	// No such user: the DC's sub-code (525 on Windows) is logged.
	err = bindAs(t, lab, "nosuchuser@"+lab.DNSDomain, lab.Password)
	c, sub = BindCause(err)
	t.Logf("nosuchuser sub-code %q → %s", sub, c)
	if err == nil {
		t.Error("bind as a user that does not exist succeeded")
	}
}

// TestLabBudget is the lockout proof: 20 checks in a row, each failing a
// logon only while the budget read from AD allows, never lock the account;
// with the budget at 0 none is replayed.
func TestLabBudget(t *testing.T) {
	lab := testlab.Require(t)
	const user = "badpw7"
	upn := user + "@" + lab.DNSDomain
	// A good logon first: the DC clears the account's bad password count.
	if err := bindAs(t, lab, upn, lab.Password); err != nil {
		t.Fatalf("good bind as %s: %v", user, err)
	}
	t.Cleanup(func() {
		if err := bindAs(t, lab, upn, lab.Password); err != nil {
			t.Errorf("good bind to reset %s: %v", user, err)
		}
	})
	ctx := context.Background()
	def := labDir(t, lab, nil) // margin 1
	wide := labDir(t, lab, func(c *Config) { c.Margin = 2 })

	u, err := wide.User(ctx, user, "")
	if err != nil {
		t.Fatal(err)
	}
	if u.BadPwdCount != 0 || u.LockoutThreshold != 3 || u.Budget != 1 {
		t.Fatalf("start: bad %d threshold %d budget %d; want 0 3 1", u.BadPwdCount, u.LockoutThreshold, u.Budget)
	}
	failures, skipped := 0, 0
	for i := 0; i < 20; i++ {
		u, err := wide.User(ctx, user, "")
		if err != nil {
			t.Fatal(err)
		}
		if u.Locked {
			t.Fatalf("check %d: %s is locked", i, user)
		}
		if u.Budget <= 0 {
			skipped++
			continue
		}
		err = bindAs(t, lab, upn, "wrong-"+lab.Password)
		if c, sub := BindCause(err); c != scanwarden.CauseBadCredentials || sub != "52e" {
			t.Fatalf("check %d: wrong password gave %s %q (%v)", i, c, sub, err)
		}
		failures++
	}
	u, err = wide.User(ctx, user, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after 20 checks: %d failed logons, %d not replayed; badPwdCount %d, budget %d (margin 2), locked %v",
		failures, skipped, u.BadPwdCount, u.Budget, u.Locked)
	if failures != 1 || skipped != 19 || u.BadPwdCount != 1 || u.Budget != 0 || u.Locked || u.Cause != scanwarden.CauseOK {
		t.Errorf("failures %d skipped %d bad %d budget %d locked %v cause %s; want 1 19 1 0 false ok",
			failures, skipped, u.BadPwdCount, u.Budget, u.Locked, u.Cause)
	}
	if u.LastBadPassword == nil || time.Since(*u.LastBadPassword) > time.Minute {
		t.Errorf("last bad password %v", u.LastBadPassword)
	}
	// The default margin keeps one failure in reserve: 3 − 1 − 1 = 1.
	if u1, err := def.User(ctx, user, ""); err != nil || u1.Budget != 1 {
		t.Errorf("margin 1: budget %v, %v; want 1", u1.Budget, err)
	}
	// The good bind resets the count, as a successful MFP logon would.
	if err := bindAs(t, lab, upn, lab.Password); err != nil {
		t.Fatal(err)
	}
	if u, err := wide.User(ctx, user, ""); err != nil || u.BadPwdCount != 0 || u.Budget != 1 {
		t.Errorf("after a good logon: bad %d budget %d, %v", u.BadPwdCount, u.Budget, err)
	}
}

// labComputer adds a computer object as the lab's Administrator (the lab
// has no Windows hosts) and removes it when the test ends.
func labComputer(t *testing.T, lab *testlab.Lab, name, osName, osVersion string) {
	t.Helper()
	admin := labDir(t, lab, func(c *Config) {
		c.BindUser, c.Password = "Administrator@"+lab.DNSDomain, scanwarden.NewSecret(lab.AdminPassword)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := admin.connect(ctx)
	if err != nil {
		t.Fatalf("bind as Administrator: %v", err)
	}
	defer s.close()
	dn := "CN=" + name + ",CN=Computers,DC=kyolab,DC=test"
	_ = s.l.Del(ldap.NewDelRequest(dn, nil)) // a leftover of an interrupted run
	add := ldap.NewAddRequest(dn, nil)
	add.Attribute("objectClass", []string{"computer"})
	add.Attribute("sAMAccountName", []string{name + "$"})
	add.Attribute("userAccountControl", []string{"4096"})
	add.Attribute("dNSHostName", []string{strings.ToLower(name) + "." + lab.DNSDomain})
	add.Attribute("operatingSystem", []string{osName})
	add.Attribute("operatingSystemVersion", []string{osVersion})
	if err := s.l.Add(add); err != nil {
		t.Fatalf("add %s: %v", dn, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := admin.connect(ctx)
		if err != nil {
			t.Errorf("remove %s: %v", dn, err)
			return
		}
		defer s.close()
		if err := s.l.Del(ldap.NewDelRequest(dn, nil)); err != nil {
			t.Errorf("remove %s: %v", dn, err)
		}
	})
}

func TestLabHost(t *testing.T) {
	lab := testlab.Require(t)
	labComputer(t, lab, "SWTEST-W11", "Windows 11 Pro", "10.0 (26100)")
	labComputer(t, lab, "SWTEST-W10", "Windows 10 Pro", "10.0 (19045)")
	labComputer(t, lab, "SWTEST-SRV", "Windows Server 2022 Standard", "10.0 (20348)")
	d := labDir(t, lab, nil)
	tests := []struct {
		name     string
		found    bool
		os       string
		warnings []string
	}{
		{"dc1", true, "Samba", nil},
		{lab.DCHost, true, "Samba", nil},
		{"DC1", true, "Samba", nil},
		{"swtest-w11." + lab.DNSDomain, true, "Windows 11 Pro", []string{"20 inbound SMB sessions", "24H2 or later (build 26100)"}},
		{"SWTEST-W11", true, "Windows 11 Pro", []string{"AutoDisconnect", "signing is required"}},
		{`\\SWTEST-W10`, true, "Windows 10 Pro", []string{"client edition"}},
		{"swtest-srv", true, "Windows Server 2022 Standard", nil},
		{"nosuchhost", false, "", nil},
		{"*", false, "", nil},
		{"*)(cn=*", false, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := d.Host(context.Background(), tc.name)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: found %v %s %s %q", tc.name, h.Found, h.OS, h.OSVersion, h.Warnings)
			if h.Found != tc.found || h.OS != tc.os || len(h.Warnings) != len(tc.warnings) {
				t.Fatalf("found %v os %q warnings %q", h.Found, h.OS, h.Warnings)
			}
			for i, w := range tc.warnings {
				if !strings.Contains(h.Warnings[i], w) {
					t.Errorf("warning %q lacks %q", h.Warnings[i], w)
				}
			}
		})
	}
	// An address is looked up by its reverse DNS name, when it has one.
	c, err := d.Computer(context.Background(), lab.DCIP)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: found %v, %s (evidence %v)", lab.DCIP, c.Found, c.Summary, c.Evidence["reverse_dns"])
}
