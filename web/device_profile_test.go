package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
)

// TestDeviceProfileForm: the device page shows each profile value with
// where it came from, how to learn a profile never seen, and a form that
// sets and clears the admin's values (audited); a value its checks could
// not replay is refused naming the field.
func TestDeviceProfileForm(t *testing.T) {
	s := newSite(t)
	c := s.login()
	never := registry.Device{Name: "mfp01"}.ProfileJSON()
	s.fleet.devices[0].SMBProfile = &never
	_, body := s.get(c, "/devices/mfp01")
	for _, want := range []string{`id="smb-profile"`, `id="profile-hint"`, "Never seen on the fallback share", "default for its model family",
		`id="profile-form"`, `<select name="max_dialect" form="profile-form"`} {
		if !strings.Contains(body, want) {
			t.Errorf("device page lacks %q", want)
		}
	}
	resp, _ := s.post(c, "/devices/mfp01/profile", url.Values{"max_dialect": {"2.1"}, "encryption": {"no"}, "file_type": {"auto"}}, nil)
	if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusOK {
		t.Fatalf("set: %s", resp.Status)
	}
	_, body = s.get(c, "/devices/mfp01")
	if !strings.Contains(body, `<option value="2.1" selected>`) || !strings.Contains(body, "set by the admin") {
		t.Errorf("page after the set: max dialect 2.1 not shown as the admin's")
	}
	audited := false
	for _, e := range s.auth.audit {
		audited = audited || (e.Action == "device.profile" && e.Target == "mfp01" && e.Detail == "max_dialect=2.1 encryption=no file_type=auto")
	}
	if !audited {
		t.Errorf("profile change not audited: %+v", s.auth.audit)
	}
	// A lowest dialect above the highest (2.1) is no client a check can
	// replay.
	resp, body = s.post(c, "/devices/mfp01/profile", url.Values{"min_dialect": {"3.1.1"}}, nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "device_min_dialect") {
		t.Errorf("min 3.1.1 above max 2.1: %s %q", resp.Status, body)
	}
	resp, _ = s.post(c, "/devices/mfp01/profile", url.Values{"max_dialect": {"4.0"}}, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("dialect 4.0: %s", resp.Status)
	}
	resp, _ = s.post(c, "/devices/nosuch/profile", url.Values{"max_dialect": {"2.1"}}, nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown device: %s", resp.Status)
	}

	req, _ := http.NewRequest("POST", s.ts.URL+"/api/v1/devices/mfp01/profile", strings.NewReader(`{"max_dialect":"auto","encryption":""}`))
	req.Header.Set("Content-Type", "application/json")
	r2, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var d registry.DeviceView
	json.NewDecoder(r2.Body).Decode(&d)
	r2.Body.Close()
	if r2.StatusCode != http.StatusOK || d.SMBProfile == nil || d.SMBProfile.Values[0].Origin != registry.OriginUnknown {
		t.Fatalf("API clear: %s %+v", r2.Status, d.SMBProfile)
	}
	for _, body := range []string{`{"bogus":"1"}`, `[`, `{"ntlm":"v3"}`} {
		req, _ := http.NewRequest("POST", s.ts.URL+"/api/v1/devices/mfp01/profile", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		r, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("API %s: %s, want 400", body, r.Status)
		}
	}
}

// What a device sent on the fallback share is data on the page.
func TestDeviceProfileHostile(t *testing.T) {
	s := newSite(t)
	c := s.login()
	p := registry.Profile{}.Learn(samba.Observation{Address: "10.77.0.51", At: time.Now(), Dialect: "SMB2_10", Workstation: hostile, User: hostile})
	j := registry.Device{Name: "evil", Profile: p}.ProfileJSON()
	s.fleet.devices[1].SMBProfile = &j
	_, body := s.get(c, "/devices/evil")
	if strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;img src=x") {
		t.Errorf("device-sent names not escaped")
	}
}
