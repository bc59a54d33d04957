package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestAttackDNSRebinding: the site answered any Host. A page of the
// attacker's whose name is rebound to this box — or to the loopback end of
// an admin's SSH tunnel to it — then read the site as its own origin
// (with the admin's session cookie, for a name the cookie was set for, or
// to log in with a guessed password). Now a Host that is neither a name or
// address of the box nor in [web] hosts is refused (421) naming the
// setting; loopback, localhost and /healthz pass, a port is not
// compared.
func TestAttackDNSRebinding(t *testing.T) {
	s := newSite(t, func(c *Config) { c.Hosts = []string{"scanbox.corp.example", "10.0.0.5", "fe80::1"} })
	c := s.login()
	for host, ok := range map[string]bool{
		"evil.example": false, "evil.example:80": false, "scanbox.corp.example.evil.example": false, "10.0.0.6": false,
		"scanbox.corp.example": true, "SCANBOX.corp.example.:8443": true, "10.0.0.5:8080": true, "[fe80::1]:443": true,
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:8080": true,
	} {
		for _, path := range []string{"/", "/api/v1/destinations", "/login"} {
			req, _ := http.NewRequest("GET", s.ts.URL+path, nil)
			req.Host = host
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case ok && resp.StatusCode == http.StatusMisdirectedRequest:
				t.Errorf("Host %s %s: refused", host, path)
			case !ok && resp.StatusCode != http.StatusMisdirectedRequest:
				t.Errorf("Host %s %s: %d, want 421", host, path, resp.StatusCode)
			case !ok && !strings.Contains(string(b), "[web] hosts"):
				t.Errorf("Host %s %s: %q does not name the setting", host, path, b)
			}
		}
	}
	req, _ := http.NewRequest("GET", s.ts.URL+"/healthz", nil)
	req.Host = "monitor.example"
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz by another name: %v %v", resp, err)
	}
}
