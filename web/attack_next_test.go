package web

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// browserTarget resolves a Location header as a browser does (WHATWG URL:
// tabs and newlines are dropped, a backslash is a slash) against base.
func browserTarget(base *url.URL, loc string) (*url.URL, error) {
	loc = strings.NewReplacer("\t", "", "\n", "", "\r", "", `\`, "/").Replace(strings.TrimLeft(loc, " \x00\x01\x1f"))
	u, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	return base.ResolveReference(u), nil
}

// roundTrip sends one request with c's cookies and returns the answer as
// sent: no Location is parsed or followed (Go's client refuses to parse the
// control characters a browser drops).
func roundTrip(t *testing.T, c *http.Client, method, target string, form url.Values) *http.Response {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.Jar != nil {
		for _, ck := range c.Jar.Cookies(req.URL) {
			req.AddCookie(ck)
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestAttackOpenRedirect: a link to /login?next=… that a phisher mails an
// admin must never send the browser off this site — not at once when the
// admin is logged in, not after the login.
func TestAttackOpenRedirect(t *testing.T) {
	s := newSite(t)
	base, _ := url.Parse(s.ts.URL)
	logged := s.login()
	hostile := []string{ // the raw query value of next, as a phisher writes it
		"/%09/evil.example/phish",
		"/%0a/evil.example/phish",
		"/%0d%0a/evil.example/phish",
		"/%09%09/evil.example",
		"//evil.example/phish",
		"/%5Cevil.example/phish",
		"/%5C%5Cevil.example/phish",
		"/%2F/evil.example", // decodes to //evil.example
		"/%252F/evil.example",
		"/%255Cevil.example",
		"https://evil.example/phish",
		"https:evil.example",
		"javascript:alert(1)",
		"%2F%2Fevil.example",
		"%09//evil.example",
		"/%00/evil.example",
		"/%E2%80%A8/evil.example",
		"/%C0%AF/evil.example",
		"///evil.example",
		"/x%23@evil.example",
	}
	for _, raw := range hostile {
		t.Run(raw, func(t *testing.T) {
			// Logged in: /login redirects at once.
			resp := roundTrip(t, logged, "GET", s.ts.URL+"/login?next="+raw, nil)
			if loc := resp.Header.Get("Location"); loc != "/" {
				to, _ := browserTarget(base, loc)
				t.Errorf("logged in: Location %q (browser goes to %v), want /", loc, to)
			}
			// Logging in with the form's next.
			next, err := url.QueryUnescape(raw)
			if err != nil {
				t.Fatal(err)
			}
			form := url.Values{"user": {"admin"}, "password": {testPassword}, "next": {next}}
			resp = roundTrip(t, s.anon(), "POST", s.ts.URL+"/login", form)
			if loc := resp.Header.Get("Location"); loc != "/" {
				to, _ := browserTarget(base, loc)
				t.Errorf("after login: %s, Location %q (browser goes to %v), want /", resp.Status, loc, to)
			}
			// The form served to an anonymous visitor carries no hostile next.
			_, body := s.get(s.anon(), "/login?next="+raw)
			if strings.Contains(body, "evil.example") {
				t.Errorf("login form keeps the hostile next: %s", trunc(body[strings.Index(body, "evil.example")-80:]))
			}
		})
	}
	// Real paths on this site survive the round trip through /login.
	for _, path := range []string{"/devices/mfp01", "/events?device=mfp01&which=unverified", "/destinations/a%20b"} {
		resp, _ := s.get(s.anon(), path)
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.Path != "/login" {
			t.Fatalf("%s anonymous: %s to %q", path, resp.Status, resp.Header.Get("Location"))
		}
		resp, _ = s.post(s.anon(), "/login", url.Values{"user": {"admin"}, "password": {testPassword}, "next": {loc.Query().Get("next")}}, nil)
		if got := resp.Header.Get("Location"); got != path {
			t.Errorf("login with next=%s: Location %q", path, got)
		}
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/":                             "/",
		"/incidents/7":                  "/incidents/7",
		"/events?device=x":              "/events?device=x",
		"":                              "/",
		"incidents":                     "/",
		"/\t/evil.example":              "/",
		"/ /evil.example":               "/",
		"/\\evil.example":               "/",
		"/%5cevil.example":              "/",
		"/a/../b":                       "/a/../b", // stays on this site
		"/%zz":                          "/",
		"/ok?q=%09":                     "/ok?q=%09", // the query cannot change the origin
		"/ok?\\":                        "/",
		"/" + strings.Repeat("a", 3000): "/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
