package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A token does only what its scope says: the Prometheus scrape token reads
// /metrics and nothing else; a read token cannot start a check (SMB and AD
// logons). Before scopes any token ran checks and read the audit log.
func TestAttackTokenScopes(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	toks := map[string]string{}
	for _, sc := range []string{"metrics", "read", "admin"} {
		tok, err := CreateToken(ctx, s.auth, "t-"+sc, sc, s.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		toks[sc] = tok
	}
	if _, err := CreateToken(ctx, s.auth, "t-bad", "root", s.clock.Now()); err == nil {
		t.Error("scope root was taken")
	}
	do := func(tok, method, path string) int {
		req, _ := http.NewRequest(method, s.ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := s.anon().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	cases := []struct {
		scope, method, path string
		want                int
	}{
		{"metrics", "GET", "/metrics", 200},
		{"metrics", "GET", "/api/v1/devices", 403},
		{"metrics", "GET", "/api/v1/audit", 403},
		{"metrics", "GET", "/api/v1/scans", 403},
		{"metrics", "POST", "/api/v1/destinations/reception/check", 403},
		{"read", "GET", "/metrics", 200},
		{"read", "GET", "/api/v1/destinations", 200},
		{"read", "GET", "/api/v1/audit", 200},
		{"read", "POST", "/api/v1/destinations/reception/check", 403},
		{"read", "POST", "/api/v1/devices", 403},
		{"read", "POST", "/api/v1/devices/mfp01", 403},
		{"read", "POST", "/api/v1/devices/mfp01/remove", 403},
		{"read", "POST", "/api/v1/destinations", 403},
		{"read", "POST", "/api/v1/destinations/reception", 403},
		{"read", "POST", "/api/v1/destinations/reception/remove", 403},
		{"metrics", "POST", "/api/v1/destinations", 403},
		{"admin", "GET", "/api/v1/devices", 200},
		{"admin", "POST", "/api/v1/destinations/reception/check", 200},
	}
	for _, c := range cases {
		if got := do(toks[c.scope], c.method, c.path); got != c.want {
			t.Errorf("%s token, %s %s: %d, want %d", c.scope, c.method, c.path, got, c.want)
		}
	}
	// The settings page lists each with its scope.
	_, body := s.get(s.login(), "/settings")
	for _, sc := range []string{"metrics", "read", "admin"} {
		if !strings.Contains(body, "<td>t-"+sc+"</td><td>"+sc+"</td>") {
			t.Errorf("the settings page does not list t-%s with its scope", sc)
		}
	}
}

// Changing the admin password (a leaked one may have made tokens) revokes
// every token when the box, checked by default, is left checked; unchecked,
// the tokens are kept.
func TestAttackPasswordChangeRevokesTokens(t *testing.T) {
	s := newSite(t)
	tok, err := CreateToken(context.Background(), s.auth, "planted", "admin", s.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := s.login()
	_, body := s.get(c, "/settings")
	if !strings.Contains(body, `name="revoke_tokens" type="checkbox" value="1" checked`) {
		t.Fatal("the password form has no revoke-tokens box checked by default")
	}
	const next = "a new admin password"
	resp, _ := s.post(c, "/settings/password", url.Values{"current": {testPassword}, "password": {next}, "confirm": {next},
		"revoke_tokens": {"1"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("password change: %s", resp.Status)
	}
	req, _ := http.NewRequest("GET", s.ts.URL+"/api/v1/devices", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	r, err := s.anon().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the token made before the password change: %s, want 401", r.Status)
	}

	if _, err := CreateToken(context.Background(), s.auth, "kept", "read", s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	c = s.loginWith(next)
	resp, _ = s.post(c, "/settings/password", url.Values{"current": {next}, "password": {testPassword}, "confirm": {testPassword}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("second password change: %s", resp.Status)
	}
	if toks, _ := s.auth.Tokens(context.Background()); len(toks) != 1 {
		t.Errorf("with the box unchecked: %d tokens left, want 1", len(toks))
	}
}
