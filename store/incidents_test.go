package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
)

func TestIncidents(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	hostile := `<b>"x"</b>'; DROP TABLE incidents; --`
	apply := func(dest string, in incident.Input, now time.Time) incident.Result {
		t.Helper()
		r, err := s.Incidents().UpdateIncident(ctx, dest, func(cur *incident.Incident) incident.Result {
			return incident.Next(cur, in, now, time.Hour)
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fail := incident.Input{Kind: incident.KindDeviceFailure, Device: "MFP01", Code: "1102", Text: hostile}
	r := apply("reception", fail, t0)
	if r.Change != incident.Opened || r.Incident.ID == 0 || r.Incident.Destination != "reception" {
		t.Fatalf("open: %+v", r)
	}
	id := r.Incident.ID
	bad := incident.Input{Kind: incident.KindCheck, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102"}}
	ok := incident.Input{Kind: incident.KindCheck, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}
	apply("reception", bad, t0.Add(time.Second))
	apply("Reception", ok, t0.Add(time.Minute)) // names are case-insensitive
	r = apply("reception", ok, t0.Add(2*time.Hour))
	if r.Change != incident.Closed || r.Incident.ID != id {
		t.Fatalf("close: %+v", r)
	}
	if r := apply("reception", ok, t0.Add(3*time.Hour)); r.Incident != nil {
		t.Fatalf("green after close stored something: %+v", r)
	}
	r = apply("reception", bad, t0.Add(5*time.Hour))
	if r.Change != incident.Reopened || r.Incident.ID != id || r.Incident.Flaps != 1 {
		t.Fatalf("reopen: %+v", r)
	}
	if r := apply("other", bad, t0); r.Incident.ID == id {
		t.Fatal("other destination shares the incident")
	}
	if err := s.Incidents().AddNotification(ctx, Notification{IncidentID: id, At: t0, Event: "incident.opened", Channel: "webhook", Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Incidents().AddNotification(ctx, Notification{At: t0, Event: "incident.opened", Channel: "mail", Attempts: 1, Error: "refused"}); err != nil {
		t.Fatal(err)
	}

	got, err := s.Incidents().Incident(ctx, id)
	if err != nil || got.Cause != scanwarden.CauseBadCredentials || got.State != incident.StateOpen || got.AffectedJobs != 1 || !got.ClosedAt.IsZero() || got.OpenedAt != t0 {
		t.Fatalf("incident %+v %v", got, err)
	}
	tl, err := s.Incidents().Timeline(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []incident.EntryKind
	for _, e := range tl {
		kinds = append(kinds, e.Kind)
	}
	want := []incident.EntryKind{"opened", "device-failure", "check", "check", "check", "closed", "reopened", "check", "notification"}
	if len(kinds) != len(want) {
		t.Fatalf("timeline %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("timeline %v, want %v", kinds, want)
		}
	}
	if tl[1].Text != hostile {
		t.Fatalf("device text not kept as data: %q", tl[1].Text)
	}
	open, _ := s.Incidents().Incidents(ctx, IncidentFilter{State: incident.StateOpen})
	all, _ := s.Incidents().Incidents(ctx, IncidentFilter{})
	closed, _ := s.Incidents().Incidents(ctx, IncidentFilter{State: incident.StateClosed})
	if len(open) != 2 || len(all) != 2 || len(closed) != 0 {
		t.Fatalf("open %d all %d closed %d", len(open), len(all), len(closed))
	}
	ns, _ := s.Incidents().Notifications(ctx, 0)
	if len(ns) != 2 || ns[0].IncidentID != 0 || ns[0].Error != "refused" {
		t.Fatalf("notifications %+v", ns)
	}
	if _, err := s.Incidents().Incident(ctx, 999); !errors.Is(err, ErrNoIncident) {
		t.Fatalf("missing: %v", err)
	}
}

// The timeline keeps the newest maxTimelineChecks check entries.
func TestTimelineBounded(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Now().UTC()
	bad := incident.Input{Kind: incident.KindCheck, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials}}
	var id int64
	for i := 0; i < maxTimelineChecks+20; i++ {
		r, err := s.Incidents().UpdateIncident(ctx, "d", func(cur *incident.Incident) incident.Result {
			return incident.Next(cur, bad, t0.Add(time.Duration(i)*time.Second), time.Hour)
		})
		if err != nil {
			t.Fatal(err)
		}
		id = r.Incident.ID
	}
	tl, _ := s.Incidents().Timeline(ctx, id, 0)
	if len(tl) != maxTimelineChecks+1 || tl[0].Kind != incident.EntryOpened {
		t.Fatalf("%d entries, first %v", len(tl), tl[0].Kind)
	}
}
