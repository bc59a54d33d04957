package web

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/registry"
)

// TestListPagesSortEveryColumn: each column of the two list pages sorts
// by its own key (the destination count as a number, never-seen devices
// first by time), desc=1 reverses, an unknown key falls back to the
// page's default.
func TestListPagesSortEveryColumn(t *testing.T) {
	s := newSite(t)
	now := s.clock.t
	s.fleet.devices = []registry.DeviceView{
		{Name: "a-dev", Address: "10.0.0.3", Model: "Z", LastSeen: now.Add(-time.Hour), DestinationCount: 10, Reachable: true},
		{Name: "b-dev", Address: "10.0.0.1", Model: "M", LastSeen: now.Add(-3 * time.Hour), DestinationCount: 2},
		{Name: "c-dev", Address: "10.0.0.2", Model: "A", LastSeen: now.Add(-2 * time.Hour), DestinationCount: 9, Fault: "has not answered SNMP yet"},
	}
	c := s.login()
	rows := regexp.MustCompile(`<tr data-name="([^"]+)"`)
	for _, tc := range []struct{ path, want string }{
		{"/devices", "a-dev b-dev c-dev"},
		{"/devices?sort=address", "b-dev c-dev a-dev"},
		{"/devices?sort=model", "c-dev b-dev a-dev"},
		{"/devices?sort=state", "c-dev b-dev a-dev"},
		{"/devices?sort=seen", "b-dev c-dev a-dev"},
		{"/devices?sort=destinations", "b-dev c-dev a-dev"},
		{"/devices?sort=destinations&desc=1", "a-dev c-dev b-dev"},
		{"/devices?sort=nosuch&desc=1", "a-dev b-dev c-dev"},
		{"/destinations?sort=user", "accounts reception"},
		{"/destinations?sort=folder&desc=1", "reception accounts"},
		{"/destinations?sort=name&desc=1", "reception accounts"},
	} {
		_, body := s.get(c, tc.path)
		var got []string
		for _, m := range rows.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %v, want %s", tc.path, got, tc.want)
		}
	}
}
