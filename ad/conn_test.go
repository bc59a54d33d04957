package ad

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// fakeLDAP is a minimal LDAP responder on loopback — a fake, because no lab
// peer refuses StartTLS (the lab DC supports it): it answers StartTLS with
// the configured result and binds with success, and records what it saw.
type fakeLDAP struct {
	ln       net.Listener
	startTLS uint16 // result code for StartTLS; 0 would start TLS, which the fake cannot
	silent   bool   // accept and never answer
	mu       sync.Mutex
	seen     []string // "starttls", "bind <dn> <password>"
}

func newFakeLDAP(t *testing.T, startTLS uint16, silent bool) *fakeLDAP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLDAP{ln: ln, startTLS: startTLS, silent: silent}
	t.Cleanup(func() { ln.Close() })
	go f.serve()
	return f
}

func (f *fakeLDAP) url() string { return "ldap://" + f.ln.Addr().String() }

func (f *fakeLDAP) record(s string) {
	f.mu.Lock()
	f.seen = append(f.seen, s)
	f.mu.Unlock()
}

func (f *fakeLDAP) saw() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func (f *fakeLDAP) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			if f.silent {
				_, _ = c.Read(make([]byte, 1024))
				time.Sleep(5 * time.Second)
				return
			}
			for {
				p, err := ber.ReadPacket(c)
				if err != nil || len(p.Children) < 2 {
					return
				}
				id := p.Children[0].Value.(int64)
				op := p.Children[1]
				switch op.Tag {
				case ldap.ApplicationExtendedRequest:
					f.record("starttls")
					c.Write(ldapResult(id, ldap.ApplicationExtendedResponse, f.startTLS, "unsupported extended operation"))
				case ldap.ApplicationBindRequest:
					dn, _ := op.Children[1].Value.(string)
					f.record("bind " + dn + " " + op.Children[2].Data.String())
					c.Write(ldapResult(id, ldap.ApplicationBindResponse, 0, ""))
				case ldap.ApplicationUnbindRequest:
					return
				default:
					c.Write(ldapResult(id, ldap.ApplicationSearchResultDone, ldap.LDAPResultUnwillingToPerform, "fake"))
				}
			}
		}()
	}
}

func ldapResult(id int64, app ber.Tag, code uint16, msg string) []byte {
	p := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "")
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, id, ""))
	r := ber.Encode(ber.ClassApplication, ber.TypeConstructed, app, nil, "")
	r.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagEnumerated, int64(code), ""))
	r.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, "", ""))
	r.AppendChild(ber.NewString(ber.ClassUniversal, ber.TypePrimitive, ber.TagOctetString, msg, ""))
	p.AppendChild(r)
	return p.Bytes()
}

const fakePassword = "s3cret-Passw0rd"

func fakeConfig(url string) Config {
	return Config{URL: url, BindUser: "svc@kyolab.test", Password: scanwarden.NewSecret(fakePassword), Timeout: 2 * time.Second}
}

// TestPlainRefusedUnlessAllowed: ldap:// means StartTLS; when the server
// refuses it the password is never sent. Only AllowPlain binds in clear.
func TestPlainRefusedUnlessAllowed(t *testing.T) {
	f := newFakeLDAP(t, ldap.LDAPResultProtocolError, false)
	d, err := New(fakeConfig(f.url()))
	if err != nil {
		t.Fatal(err)
	}
	if d.Plain() {
		t.Fatal("plain without AllowPlain")
	}
	_, err = d.connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "StartTLS with DC 127.0.0.1") {
		t.Fatalf("connect = %v, want a StartTLS error naming the DC", err)
	}
	if strings.Contains(err.Error(), fakePassword) {
		t.Fatalf("the error holds the password: %v", err)
	}
	if got := f.saw(); len(got) != 1 || got[0] != "starttls" {
		t.Fatalf("server saw %q, want only the StartTLS request (no bind)", got)
	}

	cfg := fakeConfig(f.url())
	cfg.AllowPlain = true
	d, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Plain() {
		t.Fatal("AllowPlain with ldap:// is not plain")
	}
	s, err := d.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.transport != "plain" {
		t.Errorf("transport %q", s.transport)
	}
	s.close()
	if got := f.saw(); len(got) != 2 || got[1] != "bind svc@kyolab.test "+fakePassword {
		t.Fatalf("server saw %q, want a plain bind after being allowed", got)
	}

	// ldaps:// is never plain, allowed or not.
	cfg.URL = "ldaps://" + f.ln.Addr().String()
	if d, _ := New(cfg); d.Plain() {
		t.Error("ldaps:// reported as plain")
	}
}

func TestPlainWarns(t *testing.T) {
	var logs bytes.Buffer
	cfg := fakeConfig("ldap://127.0.0.1:1")
	cfg.AllowPlain = true
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := New(cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "plain LDAP") || strings.Contains(logs.String(), fakePassword) {
		t.Errorf("log: %s", logs.String())
	}
}

func TestSilentDCTimesOut(t *testing.T) {
	f := newFakeLDAP(t, 0, true)
	cfg := fakeConfig(f.url())
	cfg.Timeout = 300 * time.Millisecond
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = d.User(context.Background(), "alice", "MFP01")
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %s with a 300 ms timeout", el)
	}
	if err == nil || Classify(err) != scanwarden.CauseTimeout {
		t.Errorf("err = %v (cause %s), want a timeout", err, Classify(err))
	}
	// The caller's cancellation ends it too.
	ctx, cancel := context.WithCancel(context.Background())
	cfg.Timeout = time.Minute
	d, _ = New(cfg)
	time.AfterFunc(200*time.Millisecond, cancel)
	start = time.Now()
	_, err = d.User(ctx, "alice", "MFP01")
	if time.Since(start) > 2*time.Second || !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: err = %v after %s", err, time.Since(start))
	}
}

func TestReadBERMessage(t *testing.T) {
	ok := ldapResult(1, ldap.ApplicationExtendedResponse, 0, "")
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"whole", ok, ""},
		{"huge length", []byte{0x30, 0x84, 0x7f, 0xff, 0xff, 0xff}, "more than"},
		{"length of 5 bytes", []byte{0x30, 0x85, 1, 1, 1, 1, 1}, "BER length"},
		{"indefinite", []byte{0x30, 0x80}, "BER length"},
		{"truncated", ok[:len(ok)-1], "EOF"},
		{"empty", nil, "EOF"},
	}
	for _, tc := range tests {
		got, err := readBERMessage(bytes.NewReader(tc.in), 1024)
		switch {
		case tc.want == "" && (err != nil || !bytes.Equal(got, tc.in)):
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{URL: "ldaps://dc1.kyolab.test", BindUser: "svc@kyolab.test", Password: scanwarden.NewSecret("x")}
	tests := []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"good", func(*Config) {}, ""},
		{"srv", func(c *Config) { c.URL, c.Domain = "", "kyolab.test" }, ""},
		{"ldap", func(c *Config) { c.URL = "ldap://10.77.0.10:389" }, ""},
		{"no dc", func(c *Config) { c.URL = "" }, "ad.url"},
		{"scheme", func(c *Config) { c.URL = "http://dc1" }, "scheme"},
		{"no host", func(c *Config) { c.URL = "ldaps://" }, "no host"},
		{"base dn", func(c *Config) { c.URL = "ldaps://dc1/DC=x" }, "path"},
		{"no user", func(c *Config) { c.BindUser = " " }, "ad.bind_user"},
		{"no password", func(c *Config) { c.Password = scanwarden.Secret{} }, "ad.password"},
		{"margin", func(c *Config) { c.Margin = -1 }, "ad.margin"},
		{"domain", func(c *Config) { c.URL, c.Domain = "", "kyo lab" }, "ad.domain"},
	}
	for _, tc := range tests {
		c := good
		tc.mod(&c)
		err := c.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := New(Config{URL: good.URL, BindUser: "x", Password: good.Password, CAFile: "/nonexistent/ca.pem"}); err == nil || !strings.Contains(err.Error(), "ad ca file") {
		t.Errorf("missing CA file: %v", err)
	}
}

func TestDNSDomain(t *testing.T) {
	tests := []struct{ url, domain, want string }{
		{"ldaps://dc1.kyolab.test", "", "kyolab.test"},
		{"ldap://DC1.KyoLab.Test:389", "", "kyolab.test"},
		{"ldaps://10.77.0.10", "", ""},
		{"ldaps://dc1", "", ""},
		{"ldaps://10.77.0.10", "KYOLAB.TEST", "kyolab.test"},
		{"", "kyolab.test", "kyolab.test"},
	}
	for _, tc := range tests {
		d, err := New(Config{URL: tc.url, Domain: tc.domain, BindUser: "svc", Password: scanwarden.NewSecret("x")})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.DNSDomain(); got != tc.want {
			t.Errorf("DNSDomain(%q, %q) = %q, want %q", tc.url, tc.domain, got, tc.want)
		}
		// A check (Into) and a delivery (Kerberos) get the same realm and KDC.
		var o smbcheck.Options
		d.Into(&o)
		k := d.Kerberos()
		if k.Realm != tc.want || o.Realm != k.Realm || !slices.Equal(o.KDCs, k.KDCs) || (tc.url != "") != (len(k.KDCs) == 1) {
			t.Errorf("%q, %q: Kerberos %+v, Into realm %q KDCs %v", tc.url, tc.domain, k, o.Realm, o.KDCs)
		}
	}
}
