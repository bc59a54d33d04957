package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestDestinationBridge: a report that offers the bridge shows the offer
// and its Bridge button on the destination page; the button (a POST)
// bridges it, audited once; the page then shows the bridge's own health
// and End the bridge, the list marks it bridged, and the API bridges and
// unbridges (JSON or form) and answers the destination with its bridge.
// A value other than on/off is refused, an unknown destination is 404,
// and a cross-site POST is refused.
func TestDestinationBridge(t *testing.T) {
	s := newSite(t)
	c := s.login()
	_, body := s.get(c, "/destinations/accounts")
	if strings.Contains(body, `id="bridge-offer"`) || strings.Contains(body, `id="bridge"`) {
		t.Fatal("a bridge shown where no check offered one")
	}
	own := smbcheck.Verdict{Cause: scanwarden.CauseOK}
	rep := *s.fleet.destinations[0].Report
	rep.Verdict = smbcheck.Verdict{Cause: scanwarden.CauseEncryptionRequired, KyoceraCode: "1102", Summary: "The share requires SMB3 encryption."}
	rep.Bridge = &smbcheck.Bridge{Offered: true, DeviceCause: scanwarden.CauseEncryptionRequired, Own: &own}
	rep.Bridge.Named("reception")
	s.fleet.destinations[0].Report = &rep
	_, body = s.get(c, "/destinations/reception")
	for _, want := range []string{`id="bridge-offer"`, `id="bridge-on"`, "the MFP cannot meet this server&#39;s demands (encryption-required); scanwarden can: bridge it",
		"scanwarden destination bridge reception", "export addressbook --device mfp01 --bridged"} {
		if !strings.Contains(body, want) {
			t.Errorf("page with an offer lacks %q", want)
		}
	}
	if resp, _ := s.post(c, "/destinations/reception/bridge", url.Values{"bridge": {"yes"}}, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bridge=yes: %s, want 400", resp.Status)
	}
	resp, _ := s.post(c, "/destinations/reception/bridge", url.Values{"bridge": {"on"}}, nil)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("bridge: %s", resp.Status)
	}
	_, body = s.get(c, "/destinations/reception")
	for _, want := range []string{`id="bridge"`, `id="bridge-state">ok<`, `id="bridge-off"`, "serving", "not an incident"} {
		if !strings.Contains(body, want) {
			t.Errorf("bridged page lacks %q", want)
		}
	}
	if strings.Contains(body, `id="bridge-offer"`) {
		t.Error("a bridged destination still offers the bridge")
	}
	if _, list := s.get(c, "/destinations"); !strings.Contains(list, "bridged: ok") {
		t.Error("the list does not mark it bridged")
	}
	// the API: JSON off, form on, bad bodies, unknown names
	api := func(path, ctype, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", s.ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		r, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var d map[string]any
		json.NewDecoder(r.Body).Decode(&d)
		return r, d
	}
	if r, d := api("/api/v1/destinations/reception/bridge", "application/json", `{"bridged":false}`); r.StatusCode != http.StatusOK || d["bridge"] != nil {
		t.Errorf("API unbridge: %s %v", r.Status, d)
	}
	r, d := api("/api/v1/destinations/reception/bridge", "application/x-www-form-urlencoded", "bridge=on")
	if b, _ := d["bridge"].(map[string]any); r.StatusCode != http.StatusOK || b["state"] != "ok" || d["bridged_at"] == nil {
		t.Errorf("API bridge: %s %v", r.Status, d)
	}
	for _, tc := range []struct {
		path, ctype, body string
		want              int
	}{
		{"/api/v1/destinations/reception/bridge", "application/json", `{}`, http.StatusBadRequest},
		{"/api/v1/destinations/reception/bridge", "application/json", `{"bridged":"yes"}`, http.StatusBadRequest},
		{"/api/v1/destinations/reception/bridge", "application/x-www-form-urlencoded", "bridge=maybe", http.StatusBadRequest},
		{"/api/v1/destinations/nosuch/bridge", "application/json", `{"bridged":true}`, http.StatusNotFound},
	} {
		if r, _ := api(tc.path, tc.ctype, tc.body); r.StatusCode != tc.want {
			t.Errorf("%s %s: %s, want %d", tc.path, tc.body, r.Status, tc.want)
		}
	}
	// a cross-site form post is refused, and changes nothing
	req, _ := http.NewRequest("POST", s.ts.URL+"/destinations/reception/bridge", strings.NewReader("bridge=off"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "http://evil.example")
	if r, err := c.Do(req); err != nil || r.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site bridge off: %v %v, want 403", r, err)
	} else {
		r.Body.Close()
	}
	if s.fleet.destinations[0].Bridge == nil {
		t.Error("a cross-site POST ended the bridge")
	}
	counts := map[string]int{}
	for _, e := range s.auth.audit {
		if e.Target == "reception" {
			counts[e.Action]++
		}
	}
	if counts["destination.bridge"] != 2 || counts["destination.unbridge"] != 1 {
		t.Errorf("audit %v, want 2 bridge and 1 unbridge", counts)
	}
}
