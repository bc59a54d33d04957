package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/webcert"
)

// PinnedClient trusts exactly the certificate whose SHA-256 fingerprint
// (browsers' notation) is fp, as an admin does who compared it.
func PinnedClient(fp string) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, // verified below: the pinned fingerprint, nothing else
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || webcert.Fingerprint(cs.PeerCertificates[0]) != fp {
				return errors.New("not the pinned certificate")
			}
			return nil
		}}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func TestWebTLSDefault(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		listen string
		tls    *bool
		cert   string
		want   bool
	}{
		{"127.0.0.1:8080", nil, "", false},
		{"[::1]:8080", nil, "", false},
		{"localhost:8080", nil, "", false},
		{"127.0.0.5:8080", nil, "", false},
		{"0.0.0.0:8080", nil, "", true},
		{"[::]:8080", nil, "", true},
		{"192.168.1.20:8080", nil, "", true},
		{"scanbox.example:8080", nil, "", true},
		{"0.0.0.0:8080", &no, "", false},
		{"127.0.0.1:8080", &yes, "", true},
		{"127.0.0.1:8080", nil, "/etc/ssl/web.pem", true},
	} {
		c := config.Defaults()
		c.Listen, c.Web.TLS, c.Web.CertFile = tc.listen, tc.tls, tc.cert
		if got := c.WebTLS(); got != tc.want {
			t.Errorf("listen %s tls %v cert %q: WebTLS %v, want %v", tc.listen, tc.tls, tc.cert, got, tc.want)
		}
	}
}

// TestWebHTTPSByDefault: on a non-loopback listen address the daemon makes
// a self-signed ECDSA P-256 certificate in its data dir and serves the page
// on HTTPS only; plain HTTP to the port only redirects; the setup link is
// in a 0600 file with https URLs and the fingerprint, the log says where
// and shows the fingerprint; setting the password through it removes the
// file; the cookie is Secure and HSTS is sent; a restart keeps the
// certificate.
func TestWebHTTPSByDefault(t *testing.T) {
	m, log, hostport := openAllAddrs(t, "")
	dataDir := m.Config.DataDir
	if dataDir == "" {
		dataDir = filepath.Dir(m.Store().Path())
	}
	cert, err := webcert.Read(dataDir)
	if err != nil {
		t.Fatalf("no self-signed certificate in the data dir: %v", err)
	}
	fp := cert.Fingerprint()
	c := PinnedClient(fp)
	resp, err := c.Get("https://" + hostport + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Strict-Transport-Security"), "max-age=") {
		t.Fatalf("healthz over https: %s, HSTS %q", resp.Status, resp.Header.Get("Strict-Transport-Security"))
	}
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 {
		t.Fatalf("TLS state %+v", resp.TLS)
	}

	// Plain HTTP to the same port: a redirect to https, nothing else.
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = plain.Get("http://" + hostport + "/login?next=/incidents")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "https://" + hostport + "/login?next=/incidents"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want ||
		strings.Contains(string(body), "password") {
		t.Fatalf("plain HTTP: %s to %q, want 302 to %s", resp.Status, resp.Header.Get("Location"), want)
	}

	// The setup link: in a root-only file, not in the log.
	file := filepath.Join(dataDir, SetupLinkName)
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("setup-link file: %v %v", fi, err)
	}
	text, _ := os.ReadFile(file)
	link := regexp.MustCompile(`(?m)^https://[^ \n]+(/setup\?token=[A-Za-z0-9_-]+)$`).FindStringSubmatch(string(text))
	if link == nil || !strings.Contains(string(text), fp) || strings.Contains(string(text), "0.0.0.0") || strings.Contains(string(text), "[::]") {
		t.Fatalf("setup-link file:\n%s", text)
	}
	tok := strings.TrimPrefix(link[1], "/setup?token=")
	if l := log.String(); strings.Contains(l, tok) || !strings.Contains(l, file) || !strings.Contains(l, fp) {
		t.Fatalf("log (the token must not be there; the file and the fingerprint must):\n%s", l)
	}
	resp, err = c.PostForm("https://"+hostport+"/setup", url.Values{"token": {tok}, "password": {"a long password"}, "confirm": {"a long password"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cs) != 1 || cs[0].Name != "__Host-scanwarden" || !cs[0].Secure {
		t.Fatalf("setup over https: %s %+v", resp.Status, cs)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the setup-link file outlived the setup: %v", err)
	}

	// A restart keeps the certificate (same fingerprint).
	m.Close()
	m2 := &Main{Config: m.Config, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m2.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	_, port, _ := net.SplitHostPort(m2.Addr().String())
	resp, err = PinnedClient(fp).Get("https://127.0.0.1:" + port + "/healthz")
	if err != nil {
		t.Fatalf("after a restart the pinned certificate is not served: %v", err)
	}
	resp.Body.Close()
}
