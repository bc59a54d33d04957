package web

import (
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestDestinationPageSaysWhoseClient: the last report and the history say
// which device profile the check replayed, with each value's origin, or
// that it was scanwarden's own client; a device name is data (escaped).
func TestDestinationPageSaysWhoseClient(t *testing.T) {
	s := newSite(t)
	rep := s.fleet.destinations[0].Report
	rep.Profile = &smbcheck.Profile{Device: "<b>mfp</b>", Summary: "SMB 2.1 at most, no encryption", Values: []smbcheck.ProfileSource{
		{Field: "max_dialect", Value: "2.1", Origin: "seen"}, {Field: "encryption", Value: "no", Origin: "admin"}}}
	h := s.fleet.history["reception"]
	h[0].Replayed = "scanwarden's own client (no device profile)"
	c := s.login()
	_, body := s.get(c, "/destinations/reception")
	for _, want := range []string{"Replayed as:</b> device &lt;b&gt;mfp&lt;/b&gt;&#39;s profile: SMB 2.1 at most, no encryption",
		"max_dialect 2.1 (seen)", "encryption no (admin)", "<th>Replayed as</th>", "scanwarden&#39;s own client (no device profile)"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>mfp</b>") {
		t.Error("device name not escaped")
	}
}
