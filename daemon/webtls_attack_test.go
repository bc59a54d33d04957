package daemon

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/scanwarden/scanwarden/web"
)

// lockedBuffer is the daemon's log in a test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// openAllAddrs runs the daemon as the shipped config does (every address:
// HTTPS by default) on a free port; its log goes to the returned buffer.
func openAllAddrs(t *testing.T, extra string) (*Main, *lockedBuffer, string) {
	t.Helper()
	log := &lockedBuffer{}
	cfg := testConfig(t, extra)
	cfg.Listen = "0.0.0.0:0"
	m := &Main{Config: &cfg, Stderr: log, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	_, port, _ := net.SplitHostPort(m.Addr().String())
	return m, log, net.JoinHostPort("127.0.0.1", port)
}

// TestAttackPlainHTTPLogin: a box on the shipped config (every address).
// A login over plain HTTP — what a sniffer on the LAN reads — must not be
// evaluated nor start a session: the port redirects to https.
func TestAttackPlainHTTPLogin(t *testing.T) {
	m, _, hostport := openAllAddrs(t, "")
	if _, err := web.SetPassword(context.Background(), m.Store().Auth(), "web test password", true); err != nil {
		t.Fatal(err)
	}
	plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/login", "/setup"} {
		resp, err := plain.PostForm("http://"+hostport+path, url.Values{"user": {"admin"}, "password": {"web test password"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(resp.Cookies()) != 0 || resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.Header.Get("Location"), "https://") {
			t.Errorf("POST %s over plain HTTP: %s, cookies %v, Location %q; want only a redirect to https", path, resp.Status,
				resp.Cookies(), resp.Header.Get("Location"))
		}
	}
	// The login page itself is not served over plain HTTP either.
	resp, err := plain.Get("http://" + hostport + "/login")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if bytes.Contains(b, []byte(`name="password"`)) {
		t.Error("the login form is served over plain HTTP")
	}
	// A slow plain connection that sends nothing does not hold HTTPS up.
	idle, err := net.Dial("tcp", hostport)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	raw, err := tls.Dial("tcp", hostport, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatalf("a TLS client waits behind an idle plain connection: %v", err)
	}
	fmt.Fprintf(raw, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	line, _ := bufio.NewReader(raw).ReadString('\n')
	raw.Close()
	if !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Errorf("healthz over TLS: %q", line)
	}
}

// TestAttackSetupLinkNotLogged: with no admin password the daemon's log
// (the journal: readable by adm and systemd-journal members) never holds the
// one-time setup token; the file that does is 0600, and the link it holds
// works.
func TestAttackSetupLinkNotLogged(t *testing.T) {
	log := &lockedBuffer{}
	m := &Main{Config: new(testConfig(t, "")), Stderr: log, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if l := log.String(); strings.Contains(l, "token=") {
		t.Fatalf("the setup token is in the log:\n%s", l)
	}
	file := filepath.Join(filepath.Dir(m.Store().Path()), "setup-link")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("setup-link file %v %v", fi, err)
	}
	text, _ := os.ReadFile(file)
	link := regexp.MustCompile(`(?m)^(http://127\.0\.0\.1:\d+/setup\?token=\S+)$`).FindStringSubmatch(string(text))
	if link == nil {
		t.Fatalf("setup-link file:\n%s", text)
	}
	resp, err := http.Get(link[1])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the link in the file: %s", resp.Status)
	}
	if !strings.Contains(log.String(), file) {
		t.Errorf("the log does not say where the link is:\n%s", log.String())
	}
}
