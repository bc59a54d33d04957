package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/warning"
)

type fakeWarnings []warning.Group

func (f fakeWarnings) Warnings(context.Context) ([]warning.Group, error) { return f, nil }

// TestWarningsAPIAndPage: GET /api/v1/warnings gives the groups as they
// are; the destination page shows the ones it is in, a hostile account
// name escaped.
func TestWarningsAPIAndPage(t *testing.T) {
	g := warning.Groups([]warning.Row{
		{Destination: "reception", Device: "evil", Warning: warning.Warning{Kind: warning.PasswordExpiresSoon, Subject: `KYOLAB\` + hostile,
			Headline: hostile + "'s password expires on 8 Dec (6 days)", Fix: "set a password that does not expire", KyoceraCode: "1102",
			Due: time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)}},
		{Destination: "accounts", Warning: warning.Warning{Kind: warning.DiskFilling, Subject: `\\fs1\scans`, Headline: "full soon", KyoceraCode: "2231"}},
	})
	s := newSite(t, func(c *Config) { c.Warnings = fakeWarnings(g) })
	c := s.login()
	resp, body := s.get(c, "/api/v1/warnings")
	var got struct{ Warnings []warning.Group }
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil || len(got.Warnings) != 2 ||
		got.Warnings[0].Kind != warning.PasswordExpiresSoon || got.Warnings[0].Destinations[0] != "reception" {
		t.Fatalf("GET /api/v1/warnings: %s %s", resp.Status, body)
	}
	_, page := s.get(c, "/destinations/reception")
	if !strings.Contains(page, `id="warnings"`) || !strings.Contains(page, "1 destination on 1 MFP will fail with 1102") ||
		strings.Contains(page, hostile) || strings.Contains(page, "full soon") {
		t.Errorf("destination page warnings wrong or unescaped:\n%s", page)
	}
	s2 := newSite(t)
	resp, _ = s2.get(s2.login(), "/api/v1/warnings")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("no warnings part: %s", resp.Status)
	}
}
