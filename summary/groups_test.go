package summary

import (
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
)

// TestBuildNamesTheCauses: failing destinations an incident group holds
// are said by their cause (issue 30's headline), the others as before.
func TestBuildNamesTheCauses(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	fail := func(name string, c scanwarden.Cause) Destination {
		return Destination{Name: name, Checked: true, Cause: c, LastCheck: now.Add(-time.Minute), FailingSince: now.Add(-time.Hour)}
	}
	group := func(id int64, subject string, c scanwarden.Cause, phrase string, kind incident.GroupKind, members ...string) incident.Group {
		return incident.Group{ID: id, Key: incident.Key{Kind: kind, Subject: subject, Cause: c, Phrase: phrase}, State: incident.StateOpen,
			Members: members, OpenedAt: now.Add(-time.Hour)}
	}
	servers := []incident.Group{
		group(1, "fs9.office.lan", scanwarden.CauseNameUnresolved, "does not resolve", incident.GroupServer, "reception", "sales-2f", "accounts"),
		group(2, "192.168.1.20", scanwarden.CauseHostUnreachable, "refuses", incident.GroupServer, "a", "b", "c"),
	}
	var dests []Destination
	for _, n := range []string{"reception", "sales-2f", "accounts", "a", "b", "c"} {
		dests = append(dests, fail(n, scanwarden.CauseNameUnresolved))
	}
	for _, tc := range []struct {
		name   string
		dests  []Destination
		groups []incident.Group
		want   string
	}{
		{"two dead servers", dests, servers,
			"2 file servers unreachable: fs9.office.lan (3 destinations) does not resolve, 192.168.1.20 refuses (3)"},
		{"an account group and one of its own", append([]Destination{fail("x", scanwarden.CauseDiskFull)}, fail("w1", scanwarden.CauseAccountLocked),
			fail("w2", scanwarden.CauseAccountLocked)),
			[]incident.Group{group(3, `OFFICE\walt`, scanwarden.CauseAccountLocked, "is locked out", incident.GroupAccount, "w1", "w2")},
			`OFFICE\walt (2 destinations) is locked out; also 1 destination failing: x — disk-full since 14:00`},
		{"no group: as before", []Destination{fail("x", scanwarden.CauseDiskFull)}, nil, "1 destination failing: x — disk-full since 14:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Build(Input{Now: now, Destinations: tc.dests, Groups: tc.groups})
			if s.Sentence != tc.want {
				t.Errorf("sentence\n %q\nwant\n %q", s.Sentence, tc.want)
			}
			if len(s.Causes) != len(tc.groups) {
				t.Errorf("causes %+v", s.Causes)
			}
		})
	}
}
