package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDestinationAuth: the destination page shows how the MFP logs on and
// sets it; the API sets it (JSON or form) and answers the destination; a
// value outside ntlm|kerberos|auto is refused; each change is audited.
func TestDestinationAuth(t *testing.T) {
	s := newSite(t)
	c := s.login()
	_, body := s.get(c, "/destinations/reception")
	if !strings.Contains(body, `id="auth-form"`) || !strings.Contains(body, "NTLM (what MFPs send)") {
		t.Fatalf("page lacks the auth form or the default")
	}
	resp, _ := s.post(c, "/destinations/reception/auth", url.Values{"auth": {"kerberos"}}, nil)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("set kerberos: %s", resp.Status)
	}
	if _, body = s.get(c, "/destinations/reception"); !strings.Contains(body, "Kerberos</option>") || !strings.Contains(body, `<option value="kerberos" selected>`) {
		t.Errorf("page after set kerberos: auth not shown as kerberos")
	}
	resp, _ = s.post(c, "/destinations/reception/auth", url.Values{"auth": {"ntlmv1"}}, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("auth ntlmv1: %s, want 400", resp.Status)
	}

	req, _ := http.NewRequest("POST", s.ts.URL+"/api/v1/destinations/reception/auth", strings.NewReader(`{"auth":"auto"}`))
	req.Header.Set("Content-Type", "application/json")
	r2, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	json.NewDecoder(r2.Body).Decode(&d)
	r2.Body.Close()
	if r2.StatusCode != http.StatusOK || d["auth"] != "auto" {
		t.Fatalf("API set auto: %s %v", r2.Status, d)
	}
	for _, tc := range []struct {
		path, body string
		want       int
	}{
		{"/api/v1/destinations/reception/auth", `{"auth":"ntlmv1"}`, http.StatusBadRequest},
		{"/api/v1/destinations/reception/auth", `{}`, http.StatusBadRequest},
		{"/api/v1/destinations/nosuch/auth", `{"auth":"ntlm"}`, http.StatusNotFound},
	} {
		req, _ := http.NewRequest("POST", s.ts.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		r, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != tc.want {
			t.Errorf("%s %s: %s, want %d", tc.path, tc.body, r.Status, tc.want)
		}
	}
	var n int
	for _, e := range s.auth.audit {
		if e.Action == "destination.auth" && e.Target == "reception" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d destination.auth audit entries, want 2", n)
	}
}
