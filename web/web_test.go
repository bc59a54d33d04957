package web

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
)

// route is one route of the site, with a request that reaches its handler.
type route struct {
	method, path string
	api          bool // answers 401, not a redirect
}

// routes lists every route but the anonymous ones (/login, /setup,
// /healthz, /static/). TestRouteTableComplete keeps it in step with the mux.
var routes = []route{
	{"POST", "/logout", false},
	{"GET", "/", false},
	{"POST", "/check-all", false},
	{"GET", "/devices", false},
	{"GET", "/devices/_new", false},
	{"POST", "/devices", false},
	{"GET", "/devices/mfp01", false},
	{"GET", "/devices/mfp01/edit", false},
	{"POST", "/devices/mfp01/edit", false},
	{"GET", "/devices/mfp01/remove", false},
	{"POST", "/devices/mfp01/remove", false},
	{"GET", "/destinations", false},
	{"GET", "/destinations/_new", false},
	{"POST", "/destinations", false},
	{"POST", "/destinations/_test", false},
	{"GET", "/destinations/reception", false},
	{"GET", "/destinations/reception/edit", false},
	{"POST", "/destinations/reception/edit", false},
	{"GET", "/destinations/reception/remove", false},
	{"POST", "/destinations/reception/remove", false},
	{"POST", "/destinations/reception/check", false},
	{"POST", "/destinations/reception/auth", false},
	{"POST", "/destinations/reception/bridge", false},
	{"POST", "/devices/mfp01/profile", false},
	{"GET", "/runs/abc/events", false},
	{"GET", "/incidents", false},
	{"GET", "/incidents/7", false},
	{"GET", "/events", false},
	{"GET", "/receiver", false},
	{"GET", "/receiver/scans/1/download", false},
	{"POST", "/receiver/scans/1/deliver", false},
	{"POST", "/receiver/scans/2/force", false},
	{"GET", "/import", false},
	{"POST", "/import", false},
	{"POST", "/import/confirm", false},
	{"GET", "/settings", false},
	{"POST", "/settings/ad", false},
	{"POST", "/settings/test/webhook", false},
	{"POST", "/settings/tokens", false},
	{"POST", "/settings/tokens/x/delete", false},
	{"POST", "/settings/password", false},
	{"GET", "/audit", false},
	{"GET", "/debug/pprof/", false},
	{"GET", "/debug/pprof/cmdline", false},
	{"GET", "/debug/pprof/profile", false},
	{"GET", "/debug/pprof/symbol", false},
	{"GET", "/debug/pprof/trace", false},
	{"GET", "/metrics", true},
	{"GET", "/api/v1/devices", true},
	{"GET", "/api/v1/devices/mfp01", true},
	{"POST", "/api/v1/devices", true},
	{"POST", "/api/v1/devices/mfp01", true},
	{"POST", "/api/v1/devices/mfp01/remove", true},
	{"POST", "/api/v1/destinations", true},
	{"POST", "/api/v1/destinations/reception", true},
	{"POST", "/api/v1/destinations/reception/remove", true},
	{"GET", "/api/v1/destinations", true},
	{"GET", "/api/v1/destinations/reception", true},
	{"POST", "/api/v1/destinations/reception/check", true},
	{"POST", "/api/v1/destinations/reception/auth", true},
	{"POST", "/api/v1/destinations/reception/bridge", true},
	{"POST", "/api/v1/devices/mfp01/profile", true},
	{"GET", "/api/v1/incidents", true},
	{"GET", "/api/v1/incidents/7", true},
	{"GET", "/api/v1/events", true},
	{"GET", "/api/v1/scans", true},
	{"GET", "/api/v1/audit", true},
	{"GET", "/api/v1/summary", true},
	{"GET", "/api/v1/warnings", true},
	{"POST", "/api/v1/check-all", true},
	{"GET", "/api/v1/nope", true},
}

func TestAnonymousRefused(t *testing.T) {
	s := newSite(t)
	c := s.anon()
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			req, _ := http.NewRequest(r.method, s.ts.URL+r.path, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if r.api {
				if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Fatalf("got %s (WWW-Authenticate %q), want 401 with a Bearer challenge", resp.Status, resp.Header.Get("WWW-Authenticate"))
				}
				return
			}
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/login") {
				t.Fatalf("got %s to %q, want 303 to /login", resp.Status, loc)
			}
			if r.method == "GET" && loc != "/login?next="+url.QueryEscape(r.path) {
				t.Errorf("Location %q does not bring the admin back", loc)
			}
		})
	}
	// A wrong or malformed token is no better than none.
	for _, auth := range []string{"Bearer swt_nope", "Basic YWRtaW46eA==", "Bearer " + strings.Repeat("a", 500)} {
		req, _ := http.NewRequest("GET", s.ts.URL+"/api/v1/devices", nil)
		req.Header.Set("Authorization", auth)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %.20q: %s, want 401", auth, resp.Status)
		}
	}
}

// TestRouteTableComplete proves the table above covers every pattern the
// mux has, so a new route cannot skip the anonymous test.
func TestRouteTableComplete(t *testing.T) {
	s := newSite(t)
	c := s.login()
	for _, r := range routes {
		req, _ := http.NewRequest(r.method, s.ts.URL+r.path, nil)
		if r.method == "POST" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusMethodNotAllowed {
			t.Errorf("%s %s: no such route (405)", r.method, r.path)
		}
	}
	// Every registered pattern is in the table: walk the mux's patterns
	// through the source of truth, routes().
	known := map[string]bool{}
	for _, r := range routes {
		known[r.method] = true
	}
	for _, p := range *s.srv.patterns {
		method, path, _ := strings.Cut(p, " ")
		if path == "" {
			method, path = "", method
		}
		if anonymousPattern(path) {
			continue
		}
		found := false
		for _, r := range routes {
			if (method == "" || r.method == method) && patternMatches(path, r.path) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("pattern %q is not in the route table", p)
		}
	}
}

func anonymousPattern(path string) bool {
	return path == "/login" || path == "/setup" || path == "/healthz" || path == "/static/"
}

// patternMatches is a small matcher for the mux's patterns ({x} is one
// segment, {$} the end, a trailing / a prefix).
func patternMatches(pattern, path string) bool {
	if pattern == "/{$}" {
		return path == "/"
	}
	pp, xp := strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/")
	if strings.HasSuffix(pattern, "/") && len(xp) >= len(pp) {
		xp = xp[:len(pp)]
	}
	if len(pp) != len(xp) {
		return false
	}
	for i := range pp {
		if strings.HasPrefix(pp[i], "{") {
			continue
		}
		if pp[i] != xp[i] {
			return false
		}
	}
	return true
}

func TestCrossOriginPostRefused(t *testing.T) {
	s := newSite(t)
	c := s.login()
	for _, r := range routes {
		if r.method != "POST" {
			continue
		}
		for _, hdr := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Sec-Fetch-Site": "same-site"},
			{"Origin": "http://evil.example"},
		} {
			resp, body := s.post(c, r.path, url.Values{"name": {"x"}}, hdr)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "cross-origin") {
				t.Errorf("POST %s with %v: %s, want 403", r.path, hdr, resp.Status)
			}
		}
	}
	// The login form too: a cross-site login (login CSRF) is refused.
	resp, _ := s.post(s.anon(), "/login", url.Values{"user": {"admin"}, "password": {testPassword}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site login: %s, want 403", resp.Status)
	}
	// Same origin passes.
	resp, _ = s.post(c, "/receiver/scans/1/deliver", nil, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": s.ts.URL})
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("same-origin deliver: %s, want 303", resp.Status)
	}
}

func TestSecurityHeaders(t *testing.T) {
	s := newSite(t)
	c := s.login()
	for _, p := range []string{"/", "/login", "/healthz", "/static/style.css", "/api/v1/devices", "/destinations/reception"} {
		resp, _ := s.get(c, p)
		h := resp.Header
		csp := h.Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP allows inline: %q", p, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", p, h)
		}
	}
	// No inline script in any page: every <script> has a src.
	for _, p := range []string{"/", "/destinations/reception", "/devices/evil", "/settings", "/receiver", "/import", "/incidents/7", "/events", "/audit"} {
		_, body := s.get(c, p)
		for _, frag := range strings.Split(body, "<script")[1:] {
			if !strings.HasPrefix(frag, ` src="/static/`) {
				t.Errorf("%s: inline script %.60q", p, frag)
			}
		}
		if strings.Contains(body, " onclick=") || strings.Contains(body, "style=") {
			t.Errorf("%s: inline handler or style", p)
		}
	}
}

func TestLoginSessionLogout(t *testing.T) {
	s := newSite(t)
	anon := s.anon()

	resp, body := s.post(anon, "/login", url.Values{"user": {"admin"}, "password": {"wrong password"}}, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong user name or password") {
		t.Fatalf("wrong password: %s", resp.Status)
	}
	resp, _ = s.post(anon, "/login", url.Values{"user": {"root"}, "password": {testPassword}}, nil)
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong user: %s", resp.Status)
	}
	resp, _ = s.post(anon, "/login", url.Values{"user": {"admin"}, "password": {testPassword}, "next": {"//evil.example/x"}}, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("login: %s to %q, want 303 to / (an off-site next is dropped)", resp.Status, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "scanwarden" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure || cookie.Path != "/" {
		t.Fatalf("session cookie %+v", cookie)
	}
	// Only the hash is stored.
	for h := range s.auth.sessions {
		if h == cookie.Value || !strings.EqualFold(h, hashSecret(cookie.Value)) {
			t.Fatalf("stored session key %q is not the cookie's hash", h)
		}
	}
	withCookie := func(path string) *http.Response {
		req, _ := http.NewRequest("GET", s.ts.URL+path, nil)
		req.AddCookie(cookie)
		resp, err := anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := withCookie("/"); r.StatusCode != http.StatusOK {
		t.Fatalf("with the session: %s", r.Status)
	}
	// Idle for longer than SessionIdle: refused on the server.
	s.clock.Add(2*time.Hour + time.Minute)
	if r := withCookie("/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("idle session: %s, want 303", r.Status)
	}

	// Logout ends the session on the server: the old cookie is refused.
	c := s.login()
	u, _ := url.Parse(s.ts.URL)
	old := c.Jar.Cookies(u)[0]
	resp, _ = s.post(c, "/logout", nil, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %s", resp.Status)
	}
	cookie = old
	if r := withCookie("/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("after logout the old cookie still works: %s", r.Status)
	}
	if len(s.auth.sessions) != 1 { // the idle one is left; the logged-out one is gone
		t.Errorf("sessions after logout: %d", len(s.auth.sessions))
	}
}

func TestSessionAbsoluteExpiry(t *testing.T) {
	s := newSite(t)
	c := s.login()
	for i := 0; i < 25; i++ { // active every hour, but a session ends after 24 h
		s.clock.Add(time.Hour)
		resp, _ := s.get(c, "/audit")
		if i < 23 && resp.StatusCode != http.StatusOK {
			t.Fatalf("hour %d: %s", i+1, resp.Status)
		}
		if i == 24 && resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("after 25 h: %s, want 303", resp.Status)
		}
	}
}

func TestSecureCookieUnderTLS(t *testing.T) {
	s := newSite(t, func(c *Config) { c.TLS = true })
	resp, _ := s.post(s.anon(), "/login", url.Values{"user": {"admin"}, "password": {testPassword}}, nil)
	cs := resp.Cookies()
	if len(cs) != 1 || !cs[0].Secure || cs[0].Name != "__Host-scanwarden" || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookie under TLS: %+v", cs)
	}
}

func TestLoginRateLimited(t *testing.T) {
	s := newSite(t)
	anon := s.anon()
	for i := 0; i < 5; i++ {
		resp, _ := s.post(anon, "/login", url.Values{"user": {"admin"}, "password": {"nope nope nope"}}, nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %s", i+1, resp.Status)
		}
	}
	// Even the right password is refused now, from this address.
	resp, body := s.post(anon, "/login", url.Values{"user": {"admin"}, "password": {testPassword}}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Too many failed logins") {
		t.Fatalf("6th attempt: %s", resp.Status)
	}
	s.clock.Add(15 * time.Minute)
	resp, _ = s.post(anon, "/login", url.Values{"user": {"admin"}, "password": {testPassword}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("after the window: %s", resp.Status)
	}
	var failed int
	for _, e := range s.auth.audit {
		if e.Action == "login.failed" {
			failed++
		}
	}
	if failed != 5 {
		t.Errorf("audit has %d failed logins, want 5", failed)
	}
}

func TestLimiterBounded(t *testing.T) {
	now := time.Unix(0, 0)
	// A global budget large enough to fill the table: it still never
	// refuses an address that has not failed.
	l := newLimiter(limits{perAddr: 1, perPrefix: 1, perMinute: 2 * limiterCap, window: time.Minute}, func() time.Time { return now })
	for i := 0; i < limiterCap+50; i++ {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if _, refused, _ := l.reserve(a); refused != "" {
			t.Fatalf("address %d refused (%s) on its first guess", i, refused)
		}
	}
	if len(l.addrs) > limiterCap {
		t.Fatalf("table grew to %d", len(l.addrs))
	}
	if _, refused, _ := l.reserve(netip.MustParseAddr("192.0.2.9")); refused != "" {
		t.Fatalf("a new address refused by a full table (%s)", refused)
	}
	if _, refused, _ := l.reserve(netip.AddrFrom4([4]byte{10, 0, 0, 0})); refused != refusedAddr {
		t.Fatalf("an address over its limit: refused %q, want %q", refused, refusedAddr)
	}
}

func TestPasswordHash(t *testing.T) {
	h, err := HashPassword(testPassword)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q", h)
	}
	if !checkPassword(h, testPassword) || checkPassword(h, testPassword+"x") || checkPassword("", testPassword) ||
		checkPassword("$argon2id$v=19$m=99999999,t=1,p=1$AAAA$AAAA", "x") {
		t.Fatal("checkPassword")
	}
	h2, _ := HashPassword(testPassword)
	if h2 == h {
		t.Fatal("no salt")
	}
	if _, err := HashPassword("short"); err == nil {
		t.Fatal("a short password was taken")
	}
}

func TestSetupLink(t *testing.T) {
	s := newSite(t)
	if l, err := s.srv.SetupLink(context.Background()); err != nil || l != "" {
		t.Fatalf("with a password set: %q %v", l, err)
	}
	s.auth.hash = ""
	_, body := s.get(s.anon(), "/login")
	if !strings.Contains(body, "No admin password is set yet") {
		t.Error("the login page does not say where to find the setup link")
	}
	link, err := s.srv.SetupLink(context.Background())
	if err != nil || !strings.HasPrefix(link, "/setup?token=") {
		t.Fatalf("link %q %v", link, err)
	}
	if r, _ := s.get(s.anon(), "/setup?token=wrong"); r.StatusCode != http.StatusNotFound {
		t.Fatalf("wrong token: %s", r.Status)
	}
	if r, body := s.get(s.anon(), link); r.StatusCode != http.StatusOK || !strings.Contains(body, `name="password"`) {
		t.Fatalf("setup form: %s", r.Status)
	}
	tok := strings.TrimPrefix(link, "/setup?token=")
	r, body := s.post(s.anon(), "/setup", url.Values{"token": {tok}, "password": {"short"}, "confirm": {"short"}}, nil)
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(body, "at least 10") {
		t.Fatalf("short password: %s", r.Status)
	}
	r, _ = s.post(s.anon(), "/setup", url.Values{"token": {tok}, "password": {"a new password!"}, "confirm": {"a new password!"}}, nil)
	if r.StatusCode != http.StatusSeeOther || len(r.Cookies()) != 1 {
		t.Fatalf("setup: %s", r.Status)
	}
	if !checkPassword(s.auth.hash, "a new password!") {
		t.Fatal("password not stored")
	}
	// The link works once.
	r, _ = s.post(s.anon(), "/setup", url.Values{"token": {tok}, "password": {"another password"}, "confirm": {"another password"}}, nil)
	if r.StatusCode != http.StatusNotFound || !checkPassword(s.auth.hash, "a new password!") {
		t.Fatalf("second use: %s", r.Status)
	}
}

func TestHostileStringsAreText(t *testing.T) {
	s := newSite(t)
	c := s.login()
	for _, p := range []string{"/", "/devices/evil", "/destinations/reception", "/events", "/receiver", "/incidents/7"} {
		resp, body := s.get(c, p)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", p, resp.Status)
		}
		if strings.Contains(body, "<img") || strings.Contains(body, "<script>alert") {
			t.Errorf("%s: a device-provided string is rendered as markup", p)
		}
		if !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("%s: the hostile string is not shown as text", p)
		}
	}
	// The download name is cleaned and the body sent as an attachment.
	resp, body := s.get(c, "/receiver/scans/1/download")
	if resp.StatusCode != http.StatusOK || body != "%PDF-1.4 hi" || resp.Header.Get("Content-Type") != "application/octet-stream" ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("download: %s %q %v", resp.Status, body, resp.Header)
	}
	// JSON carries it as a string.
	_, body = s.get(c, "/api/v1/devices")
	var got struct{ Devices []registry.DeviceView }
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.Devices[1].SysName != hostile {
		t.Fatalf("api devices: %v %+v", err, got)
	}
}

func TestNoSecretInPages(t *testing.T) {
	s := newSite(t)
	c := s.login()
	_, body := s.get(c, "/settings")
	if strings.Contains(body, "s3cret-bind-pw") {
		t.Fatal("the settings page shows a stored secret")
	}
	if !strings.Contains(body, "set — type to change") {
		t.Error("a set secret is not shown as set")
	}
	// An empty secret field keeps the stored one; other changes are saved.
	resp, _ := s.post(c, "/settings/ad", url.Values{"url": {"ldaps://dc2.kyolab.test"}, "bind_user": {""}, "password": {""}}, nil)
	if resp.StatusCode != http.StatusSeeOther || s.sets.values["ad.password"] != "s3cret-bind-pw" || s.sets.values["ad.url"] != "ldaps://dc2.kyolab.test" {
		t.Fatalf("save: %s %v", resp.Status, s.sets.values)
	}
	resp, body = s.post(c, "/settings/ad", url.Values{"url": {"http://x"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Not saved: url: must start with ldap") {
		t.Fatalf("bad value: %s", resp.Status)
	}
	resp, body = s.post(c, "/settings/test/webhook", nil, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "posted to the webhook: 204") {
		t.Fatalf("send test: %s", resp.Status)
	}
	// The destination page says a password is set and never shows one.
	_, body = s.get(c, "/destinations/reception")
	if !strings.Contains(body, "<dt>Login password</dt><dd>set</dd>") {
		t.Error("destination page does not say the password is set")
	}
}

func TestTokens(t *testing.T) {
	s := newSite(t)
	c := s.login()
	resp, body := s.post(c, "/settings/tokens", url.Values{"name": {"prometheus"}}, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("create: %s", resp.Status)
	}
	i := strings.Index(body, `id="new-token">`)
	if i < 0 {
		t.Fatal("the new token is not shown")
	}
	// Shown first, above every settings section (it was 3,000 px below).
	if j := strings.Index(body, `class="tabs"`); j < 0 || i > j {
		t.Fatal("the new token is not shown at the top of the page")
	}
	tok := body[i+len(`id="new-token">`):]
	tok = tok[:strings.Index(tok, "<")]
	// Reloading the form's address (a GET) lands on the settings page.
	if r, _ := s.get(c, "/settings/tokens"); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/settings" {
		t.Fatalf("GET /settings/tokens: %s to %q, want a redirect to the settings page", r.Status, r.Header.Get("Location"))
	}
	if !strings.HasPrefix(tok, "swt_") || s.auth.tokens["prometheus"].Hash != hashSecret(tok) {
		t.Fatalf("token %q / stored %+v", tok, s.auth.tokens["prometheus"])
	}
	// The list shows it again, but never the token.
	_, body = s.get(c, "/settings")
	if strings.Contains(body, tok) || !strings.Contains(body, "prometheus") {
		t.Fatal("the token list shows the token or misses its name")
	}
	// A duplicate name is refused with a clear message.
	_, body = s.post(c, "/settings/tokens", url.Values{"name": {"prometheus"}}, nil)
	if !strings.Contains(body, "a token called prometheus exists") {
		t.Error("duplicate token name")
	}
	bearer := func(path, method string) *http.Response {
		req, _ := http.NewRequest(method, s.ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := s.anon().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for _, p := range []string{"/metrics", "/api/v1/devices", "/api/v1/incidents?state=open", "/api/v1/events", "/api/v1/audit"} {
		if r := bearer(p, "GET"); r.StatusCode != http.StatusOK {
			t.Errorf("%s with the token: %s", p, r.Status)
		}
	}
	// A token is not a session: pages still want a login.
	if r := bearer("/settings", "GET"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("a page with a bearer token: %s, want 303 to /login", r.Status)
	}
	if s.auth.tokens["prometheus"].LastUsed.IsZero() {
		t.Error("last use not recorded")
	}
	resp, _ = s.post(c, "/settings/tokens/prometheus/delete", nil, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %s", resp.Status)
	}
	if r := bearer("/api/v1/devices", "GET"); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked token: %s", r.Status)
	}
}

func TestAPI(t *testing.T) {
	s := newSite(t)
	c := s.login()
	getJSON := func(path string, v any) {
		t.Helper()
		resp, body := s.get(c, path)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
		}
		if err := json.Unmarshal([]byte(body), v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var dests struct {
		Destinations []map[string]any `json:"destinations"`
	}
	getJSON("/api/v1/destinations", &dests)
	if len(dests.Destinations) != 2 {
		t.Fatalf("destinations: %v", dests)
	}
	last, _ := dests.Destinations[0]["last_check"].(map[string]any)
	if v, _ := last["verdict"].(map[string]any); v["cause"] != "bad-credentials" || v["kyocera_code"] != "1102" {
		t.Errorf("last verdict: %v", last)
	}
	for _, d := range dests.Destinations {
		for k := range d {
			if strings.Contains(strings.ToLower(k), "password") && k != "password_set" {
				t.Errorf("destination JSON has %q", k)
			}
		}
	}
	var inc struct {
		Incidents []incident.View `json:"incidents"`
	}
	getJSON("/api/v1/incidents?state=open", &inc)
	if len(inc.Incidents) != 1 || len(inc.Incidents[0].Timeline) != 1 {
		t.Errorf("incidents with timeline: %+v", inc)
	}
	getJSON("/api/v1/incidents?state=closed", &inc)
	if len(inc.Incidents) != 0 {
		t.Errorf("closed: %+v", inc)
	}
	if r, _ := s.get(c, "/api/v1/incidents?state=bogus"); r.StatusCode != http.StatusBadRequest {
		t.Errorf("bad state: %s", r.Status)
	}
	if r, _ := s.get(c, "/api/v1/destinations/nope"); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown destination: %s", r.Status)
	}
	resp, body := s.post(c, "/api/v1/destinations/reception/check", nil, nil)
	var rep smbcheck.Report
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &rep) != nil || rep.Verdict.Cause != scanwarden.CauseBadCredentials || len(rep.Steps) != 3 {
		t.Fatalf("check: %s %s", resp.Status, body)
	}
	if !strings.Contains(body, `"ms": 40`) {
		t.Errorf("step durations: %s", body)
	}
	resp, _ = s.post(c, "/api/v1/destinations/nope/check", nil, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("check of an unknown destination: %s", resp.Status)
	}
	var ev struct {
		Events []incident.EventView `json:"events"`
	}
	getJSON("/api/v1/events?device=evil", &ev)
	if len(ev.Events) != 1 {
		t.Errorf("events: %+v", ev)
	}
}

func TestMissingBackends(t *testing.T) {
	s := newSite(t, func(c *Config) {
		c.Fleet, c.Checker, c.Incidents, c.Events, c.Receiver, c.Importer, c.Settings, c.Status, c.Metrics = nil, nil, nil, nil, nil, nil, nil, nil, nil
	})
	c := s.login()
	if r, _ := s.get(c, "/"); r.StatusCode != http.StatusOK {
		t.Errorf("dashboard without backends: %s", r.Status)
	}
	for _, p := range []string{"/receiver", "/incidents", "/devices/x"} {
		if r, _ := s.get(c, p); r.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%s: %s, want 503", p, r.Status)
		}
	}
	if r, _ := s.get(c, "/api/v1/devices"); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("api: %s", r.Status)
	}
	if r, _ := s.get(c, "/settings"); r.StatusCode != http.StatusOK {
		t.Errorf("settings: %s", r.Status)
	}
}

// TestCheckStreamsSteps proves the steps reach the browser as they
// complete: the second step is held back until the first has arrived.
func TestCheckStreamsSteps(t *testing.T) {
	s := newSite(t)
	gate := make(chan struct{})
	s.check = func(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		r := sampleReport(dest)
		progress(r.Steps[0])
		select {
		case <-gate:
		case <-ctx.Done():
			return smbcheck.Report{}, ctx.Err()
		}
		for _, st := range r.Steps[1:] {
			progress(st)
		}
		return r, nil
	}
	c := s.login()
	resp, body := s.post(c, "/destinations/reception/check", nil, map[string]string{"Accept": "application/json"})
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start: %s %s", resp.Status, body)
	}
	var start struct{ Run, Events string }
	json.Unmarshal([]byte(body), &start)
	// A second click joins the same run.
	_, body2 := s.post(c, "/destinations/reception/check", nil, map[string]string{"Accept": "application/json"})
	if !strings.Contains(body2, start.Run) {
		t.Errorf("second click started another check: %s", body2)
	}
	sresp, err := c.Get(s.ts.URL + start.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer sresp.Body.Close()
	if sresp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %s", sresp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(sresp.Body)
	next := func() (string, string) {
		var ev, data string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			case line == "" && ev != "":
				return ev, data
			}
		}
	}
	ev, data := next()
	if ev != "step" || !strings.Contains(data, `"id":"name"`) {
		t.Fatalf("first event %s %s", ev, data)
	}
	close(gate) // only now may the rest of the check run
	var got []string
	for {
		ev, data = next()
		got = append(got, ev)
		if ev == "verdict" && !strings.Contains(data, `"cause":"bad-credentials"`) {
			t.Errorf("verdict %s", data)
		}
		if ev == "end" {
			break
		}
	}
	if strings.Join(got, ",") != "step,step,verdict,end" {
		t.Errorf("events %v", got)
	}
	// A stream opened after the end replays the whole run.
	_, all := s.get(c, start.Events)
	if strings.Count(all, "event: step") != 3 || !strings.Contains(all, "event: verdict") {
		t.Errorf("late stream: %s", all)
	}
	if r, _ := s.get(c, "/runs/nope/events"); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown run: %s", r.Status)
	}
	// Without script the form waits and shows the page.
	resp, _ = s.post(c, "/destinations/reception/check", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/destinations/reception?checked=1" {
		t.Errorf("no-script check: %s %s", resp.Status, resp.Header.Get("Location"))
	}
	var audited int
	for _, e := range s.auth.audit {
		if e.Action == "check.run" && e.Target == "reception" {
			audited++
		}
	}
	if audited != 2 {
		t.Errorf("audited checks: %d, want 2", audited)
	}
}

func TestImport(t *testing.T) {
	s := newSite(t)
	c := s.login()
	upload := func(device, content string) (*http.Response, string) {
		var b strings.Builder
		mw := multipart.NewWriter(&b)
		mw.WriteField("device", device)
		w, _ := mw.CreateFormFile("export", "book.xml")
		w.Write([]byte(content))
		mw.Close()
		req, _ := http.NewRequest("POST", s.ts.URL+"/import", strings.NewReader(b.String()))
		req.Header.Set("Content-Type", mw.FormDataContentType())
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		buf := new(strings.Builder)
		bufio.NewReader(resp.Body).WriteTo(buf)
		return resp, buf.String()
	}
	resp, body := upload("mfp01", "garbage")
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "could not be imported") {
		t.Fatalf("garbage: %s", resp.Status)
	}
	resp, body = upload("mfp01", "sales,//fs1.kyolab.test/scans/sales,KYOLAB\\sales\n"+hostile+",//fs1/scans,u")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Nothing is stored yet") || strings.Contains(body, "<img") {
		t.Fatalf("preview: %s", resp.Status)
	}
	if len(s.fleet.destinations) != 2 {
		t.Fatal("the preview stored something")
	}
	i := strings.Index(body, `name="pending" value="`)
	pending := body[i+len(`name="pending" value="`):]
	pending = pending[:strings.Index(pending, `"`)]
	resp, body = s.post(c, "/import/confirm", url.Values{"pending": {pending}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Imported.") || len(s.fleet.destinations) != 4 {
		t.Fatalf("confirm: %s, %d destinations", resp.Status, len(s.fleet.destinations))
	}
	if got := s.imp.calls; len(got) != 3 || !got[0] || !got[1] || got[2] { // garbage, preview, confirm
		t.Errorf("importer calls (dry run?) %v", got)
	}
	// The preview is used once.
	resp, _ = s.post(c, "/import/confirm", url.Values{"pending": {pending}}, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("second confirm: %s", resp.Status)
	}
}

func TestReceiverActions(t *testing.T) {
	s := newSite(t)
	c := s.login()
	_, body := s.get(c, "/receiver")
	for _, want := range []string{"/receiver/scans/1/download", "/receiver/scans/1/deliver", "/receiver/scans/2/force", "SMB1 is on"} {
		if !strings.Contains(body, want) {
			t.Errorf("receiver page lacks %q", want)
		}
	}
	if strings.Contains(body, "/receiver/scans/3/download") {
		t.Error("a delivered scan offers a download")
	}
	s.post(c, "/receiver/scans/1/deliver", nil, nil)
	s.post(c, "/receiver/scans/2/force", nil, nil)
	if len(s.recv.delivered) != 1 || len(s.recv.forced) != 1 {
		t.Errorf("delivered %v forced %v", s.recv.delivered, s.recv.forced)
	}
	if r, _ := s.get(c, "/receiver/scans/99/download"); r.StatusCode != http.StatusNotFound {
		t.Errorf("unknown scan: %s", r.Status)
	}
	_, body = s.get(c, "/audit")
	for _, want := range []string{"scan.deliver", "scan.force", "login"} {
		if !strings.Contains(body, want) {
			t.Errorf("audit lacks %s", want)
		}
	}
}

func TestPasswordChangeEndsSessions(t *testing.T) {
	s := newSite(t)
	other := s.login()
	c := s.login()
	resp, _ := s.post(c, "/settings/password", url.Values{"current": {"wrong"}, "password": {"new password 1"}, "confirm": {"new password 1"}}, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("wrong current: %s", resp.Status)
	}
	resp, _ = s.post(c, "/settings/password", url.Values{"current": {testPassword}, "password": {"new password 1"}, "confirm": {"new password 1"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("change: %s", resp.Status)
	}
	if r, _ := s.get(c, "/settings"); r.StatusCode != http.StatusOK {
		t.Errorf("this browser lost its session: %s", r.Status)
	}
	if r, _ := s.get(other, "/settings"); r.StatusCode != http.StatusSeeOther {
		t.Errorf("another session survived the change: %s", r.Status)
	}
}

func TestPagesRender(t *testing.T) {
	s := newSite(t)
	c := s.login()
	for _, p := range []string{"/", "/devices/mfp01", "/destinations/reception", "/destinations/accounts", "/incidents",
		"/incidents?state=all", "/incidents/7", "/events", "/receiver", "/receiver?state=held", "/import", "/import?device=mfp01",
		"/settings", "/audit", "/debug/pprof/"} {
		resp, body := s.get(c, p)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %s", p, resp.Status)
			continue
		}
		if strings.HasPrefix(p, "/debug") {
			continue
		}
		if !strings.Contains(body, "<h1>") || !strings.Contains(body, `name="viewport"`) || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: not a full page", p)
		}
	}
	for _, p := range []string{"/devices/nope", "/destinations/nope", "/incidents/99", "/incidents/x"} {
		if r, _ := s.get(c, p); r.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %s, want 404", p, r.Status)
		}
	}
	_, body := s.get(c, "/")
	if !strings.Contains(body, "udp :162: address in use") || !strings.Contains(body, "1 failing") {
		t.Error("dashboard lacks the fault or the failing count")
	}
	_, body = s.get(c, "/devices/evil")
	if !strings.Contains(body, "Logon to the destination failed") && !strings.Contains(body, "First check") {
		t.Error("device page does not explain the 1102 from the code book")
	}
	if r, _ := s.get(s.anon(), "/healthz"); r.StatusCode != http.StatusOK {
		t.Errorf("healthz: %s", r.Status)
	}
}

func TestPageCache(t *testing.T) {
	s := newSite(t)
	c := s.login()
	_, before := s.get(c, "/")
	s.fleet.devices[0].SysName = "RENAMED01"
	if _, body := s.get(c, "/"); body != before {
		t.Fatal("the page was rendered again within the cache's time")
	}
	s.clock.Add(2 * time.Second)
	if _, body := s.get(c, "/"); !strings.Contains(body, "RENAMED01") {
		t.Fatal("the cache outlived its time")
	}
	s.fleet.devices[0].SysName = "AGAIN01"
	s.post(c, "/receiver/scans/1/deliver", nil, nil) // anything done through the site
	if _, body := s.get(c, "/"); !strings.Contains(body, "AGAIN01") {
		t.Fatal("a POST did not drop the cache")
	}
	// Errors are not cached.
	if r, _ := s.get(c, "/devices/newdev"); r.StatusCode != http.StatusNotFound {
		t.Fatal(r.Status)
	}
	s.fleet.devices = append(s.fleet.devices, registry.DeviceView{Name: "newdev"})
	if r, _ := s.get(c, "/devices/newdev"); r.StatusCode != http.StatusOK {
		t.Fatalf("a 404 was cached: %s", r.Status)
	}
	// An anonymous request never sees a cached page.
	if r, _ := s.get(s.anon(), "/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("anonymous: %s", r.Status)
	}
}

func TestPageGzip(t *testing.T) {
	s := newSite(t)
	c := s.login()
	c.Transport = &http.Transport{} // the default transport asks for gzip and decodes it
	for i := 0; i < 2; i++ {        // first render and cached copy
		req, _ := http.NewRequest("GET", s.ts.URL+"/", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(resp.Body)
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("not gzipped: %v %v", resp.Header, err)
		}
		b, _ := io.ReadAll(zr)
		resp.Body.Close()
		if !strings.Contains(string(b), "<h1>Overview</h1>") {
			t.Fatal("gzipped body")
		}
	}
	resp, body := s.get(c, "/")
	if resp.Header.Get("Content-Encoding") != "" || !strings.Contains(body, "<h1>Overview</h1>") {
		t.Fatal("plain body for a client without gzip")
	}
}

func TestFormatEvidence(t *testing.T) {
	ev := smbcheck.Evidence{"form": map[string]any{"typed": `KYOLAB\alice`, "user": "alice"}, "addresses": []any{"10.0.0.1", "10.0.0.2"},
		"port": float64(445), "live": smbclient.Form{Typed: "a@b"}}
	if got, want := formatEvidence(ev), `addresses=10.0.0.1,10.0.0.2 form=KYOLAB\alice live=a@b port=445`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDownloadName(t *testing.T) {
	for in, want := range map[string]string{
		`a.pdf`: "a.pdf", `..\..\x.pdf`: "x.pdf", `a/b/../c.pdf`: "c.pdf", "ev\"il\r\n.pdf": "evil.pdf", "..": "scan", "": "scan",
		"経理.pdf": "経理.pdf",
	} {
		if got := downloadName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// A check that cannot run ends its stream with "failed" (no detail: the
// error goes to the log), then "end".
func TestCheckStreamFailed(t *testing.T) {
	s := newSite(t)
	s.check = func(ctx context.Context, dest string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		progress(sampleReport(dest).Steps[0])
		return smbcheck.Report{}, errors.New("store: disk I/O error at /var/lib/secret/path")
	}
	c := s.login()
	_, body := s.post(c, "/destinations/reception/check", nil, map[string]string{"Accept": "application/json"})
	var start struct{ Events string }
	json.Unmarshal([]byte(body), &start)
	_, stream := s.get(c, start.Events)
	if !strings.Contains(stream, "event: step") || !strings.Contains(stream, "event: failed") || !strings.HasSuffix(strings.TrimSpace(stream), "data: {}") {
		t.Fatalf("stream: %s", stream)
	}
	if strings.Contains(stream, "disk I/O") || strings.Contains(stream, "/var/lib") {
		t.Error("the error's detail reached the browser")
	}
	// The API says 500 without the detail too.
	resp, body := s.post(c, "/api/v1/destinations/reception/check", nil, nil)
	if resp.StatusCode != http.StatusInternalServerError || strings.Contains(body, "disk") {
		t.Errorf("api: %s %s", resp.Status, body)
	}
}

// An address-book export larger than maxExport is refused before the
// importer sees it: the upload comes from anyone who can log in on the LAN.
func TestImportTooLarge(t *testing.T) {
	s := newSite(t)
	c := s.login()
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	mw.WriteField("device", "mfp01")
	w, _ := mw.CreateFormFile("export", "book.xml")
	w.Write([]byte(strings.Repeat("x", maxExport+1)))
	mw.Close()
	req, _ := http.NewRequest("POST", s.ts.URL+"/import", strings.NewReader(b.String()))
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "larger than") {
		t.Fatalf("oversized export: %s", resp.Status)
	}
	if len(s.imp.calls) != 0 {
		t.Errorf("the importer saw an oversized export: %v", s.imp.calls)
	}
}
