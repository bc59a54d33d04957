package summary

import (
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
)

func TestBuild(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	ok := func(name string) Destination {
		return Destination{Name: name, Checked: true, Cause: scanwarden.CauseOK, LastCheck: now.Add(-time.Minute)}
	}
	bad := func(name string, since time.Time, held int) Destination {
		return Destination{Name: name, Checked: true, Cause: scanwarden.CauseBadCredentials, LastCheck: now.Add(-time.Minute),
			FailingSince: since, Held: held}
	}
	at1042 := time.Date(2026, 12, 1, 10, 42, 0, 0, time.UTC)
	cases := []struct {
		name  string
		in    Input
		state string
		want  string
	}{
		{"empty", Input{}, StateEmpty, "No destinations yet: import a device's address book or add one"},
		{"one ok", Input{Destinations: []Destination{ok("a")}}, StateOK, "The 1 destination accepts scans"},
		{"all ok", Input{Destinations: []Destination{ok("a"), ok("b"), ok("c")}}, StateOK, "All 3 destinations accept scans"},
		{"one failing with held scans", Input{Destinations: []Destination{ok("a"), bad("walt-old-password", at1042, 4), ok("c")}, Held: 4},
			StateFailing, "1 destination failing: walt-old-password — bad-credentials since 10:42, 4 scans held"},
		{"failing without incident: since its last check", Input{Destinations: []Destination{bad("x", time.Time{}, 0)}},
			StateFailing, "1 destination failing: x — bad-credentials since 14:59"},
		{"yesterday", Input{Destinations: []Destination{bad("x", at1042.Add(-24*time.Hour), 1)}},
			StateFailing, "1 destination failing: x — bad-credentials since Nov 30 10:42, 1 scan held"},
		{"oldest first, three named", Input{Destinations: []Destination{bad("d", at1042.Add(3*time.Minute), 0), bad("c", at1042.Add(2*time.Minute), 0),
			bad("b", at1042.Add(time.Minute), 0), bad("a", at1042, 0)}},
			StateFailing, "4 destinations failing: a — bad-credentials since 10:42; b — bad-credentials since 10:43; c — bad-credentials since 10:44; and 1 more"},
		{"never checked", Input{Destinations: []Destination{{Name: "a"}, {Name: "b"}}}, StateUnchecked, "2 destinations not checked yet"},
		{"some checked", Input{Destinations: []Destination{ok("a"), {Name: "b"}}}, StateUnchecked, "1 of 2 destinations accept scans, 1 not checked yet"},
		{"failing wins over unchecked", Input{Destinations: []Destination{{Name: "a"}, bad("b", at1042, 0)}}, StateFailing,
			"1 destination failing: b — bad-credentials since 10:42"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.in.Now = now
			s := Build(c.in)
			if s.State != c.state || s.Sentence != c.want {
				t.Errorf("got %s %q\nwant %s %q", s.State, s.Sentence, c.state, c.want)
			}
			if s.Destinations != len(c.in.Destinations) || s.HeldScans != c.in.Held {
				t.Errorf("counts %d/%d held %d", s.Destinations, len(c.in.Destinations), s.HeldScans)
			}
		})
	}
}

func TestOldestIncident(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	s := Build(Input{Now: now, OpenIncidents: []Incident{{ID: 9, Destination: "b", OpenedAt: now.Add(-time.Hour)},
		{ID: 3, Destination: "a", OpenedAt: now.Add(-3 * time.Hour)}, {ID: 5, Destination: "c", OpenedAt: now.Add(-2 * time.Hour)}}})
	if s.OldestIncident == nil || s.OldestIncident.ID != 3 {
		t.Fatalf("oldest = %+v, want #3", s.OldestIncident)
	}
	if s := Build(Input{Now: now}); s.OldestIncident != nil {
		t.Errorf("no incident: oldest = %+v", s.OldestIncident)
	}
}
