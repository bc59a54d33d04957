package store

import (
	"context"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/warning"
)

// TestWarningHistoryKeepsOwnFailures: a failed logon scanwarden sent stays
// in the history lockout pressure reads after the ledger has let it go (a
// later success of the account clears the ledger's rows); the usual scan
// size is the median of the device's scans; the forms a passing check
// proved are marked current unless it found the previous password.
func TestWarningHistoryKeepsOwnFailures(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	if err := s.Devices().PutDevice(ctx, registry.Device{Name: "MFP-A", Address: "127.0.0.1:9",
		SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("public")}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: n, Device: "MFP-A", Host: "fs1", Share: "scans", User: `KYOLAB\scan`}); err != nil {
			t.Fatal(err)
		}
	}
	for i, mib := range []int64{1, 9, 2, 3, 2} {
		if _, err := s.db.ExecContext(ctx, `INSERT INTO scans(destination, folder, file, size, sha256, state, received_at)
			VALUES ('a', 'a', ?, ?, 'x', 'delivered', ?)`, string(rune('p'+i))+".pdf", mib<<20, formatTime(time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	l := s.Ledger()
	attempt := func(form string, at time.Time, o smbclient.Outcome) {
		t.Helper()
		id, r, err := l.Reserve(ctx, smbclient.Attempt{Account: `kyolab\scan`, Form: form, At: at}, at.Add(-30*time.Minute), 5)
		if err != nil || r != nil {
			t.Fatalf("reserve: %v %+v", err, r)
		}
		if err := l.Resolve(ctx, id, o); err != nil {
			t.Fatal(err)
		}
	}
	var seen warning.History
	judge := func(dest string, o warning.Observation, ws ...warning.Warning) {
		t.Helper()
		if _, err := s.Warnings().UpdateWarnings(ctx, dest, "MFP-A", o, true, func(h warning.History) []warning.Warning { seen = h; return ws }); err != nil {
			t.Fatal(err)
		}
	}
	obs := func(at time.Time) warning.Observation {
		return warning.Observation{At: at, Passed: true, Account: `KYOLAB\scan`, BadPwdCount: 1}
	}
	judge("b", obs(t0))
	attempt("wrong", t0.Add(time.Minute), smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials})
	attempt("right", t0.Add(2*time.Minute), smbclient.Outcome{Kind: smbclient.Succeeded}) // clears the ledger's failure
	judge("b", obs(t0.Add(90*time.Second)))
	if len(seen.OwnFailures) != 1 || !seen.OwnFailures[0].At.Equal(t0.Add(time.Minute)) || seen.OwnFailures[0].Until.IsZero() ||
		seen.OwnFailures[0].Unknown {
		t.Errorf("own failures %+v", seen.OwnFailures)
	}
	if seen.ScanBytes != 2<<20 {
		t.Errorf("usual scan size %d, want the median 2 MiB", seen.ScanBytes)
	}
	// The success at +2m is this check's (it began at +90s): never known
	// current before; the check marks it current.
	if seen.Proven == nil || !seen.Proven.Current.IsZero() {
		t.Errorf("proven %+v", seen.Proven)
	}
	attempt("right", t0.Add(4*time.Minute), smbclient.Outcome{Kind: smbclient.Succeeded})
	judge("b", obs(t0.Add(3*time.Minute)), warning.Warning{Kind: warning.PreviousPassword, Subject: "x"})
	if seen.Proven == nil || !seen.Proven.Current.Equal(t0.Add(90*time.Second)) {
		t.Errorf("proven %+v", seen.Proven)
	}
	// That check found the previous password: current_at stays.
	attempt("right", t0.Add(6*time.Minute), smbclient.Outcome{Kind: smbclient.Succeeded})
	judge("b", obs(t0.Add(5*time.Minute)))
	if seen.Proven == nil || !seen.Proven.Current.Equal(t0.Add(90*time.Second)) {
		t.Errorf("after a previous-password check: proven %+v", seen.Proven)
	}
}

// TestIncidentGroupsStored: groups keep their members across calls, a
// notice carries the new group's ID, and removing a destination takes it
// out of its group (closing one it alone held).
func TestIncidentGroupsStored(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	for _, n := range []string{"a", "b"} {
		if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: n, Host: "fs9", Share: "scans", User: "u"}); err != nil {
			t.Fatal(err)
		}
	}
	key := &incident.Key{Kind: incident.GroupServer, Subject: "fs9", Cause: scanwarden.CauseNameUnresolved, Phrase: "does not resolve"}
	move := func(dest string, k *incident.Key) []incident.GroupNotice {
		t.Helper()
		ns, err := s.Incidents().UpdateIncidentGroups(ctx, func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice) {
			return incident.Regroup(gs, dest, k, s.now())
		})
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	ns := move("a", key)
	if len(ns) != 1 || ns[0].Change != incident.Opened || ns[0].Group.ID == 0 {
		t.Fatalf("notices %+v", ns)
	}
	if ns := move("b", key); len(ns) != 0 {
		t.Fatalf("joining: %+v", ns)
	}
	g, ok, err := s.Incidents().IncidentGroup(ctx, ns[0].Group.ID)
	if err != nil || !ok || len(g.Members) != 2 || g.Subject != "fs9" || g.Phrase != "does not resolve" {
		t.Fatalf("group %+v %v %v", g, ok, err)
	}
	if err := s.Destinations().RemoveDestination(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Destinations().RemoveDestination(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if gs, err := s.Incidents().OpenIncidentGroups(ctx); err != nil || len(gs) != 0 {
		t.Errorf("open groups after the removals: %+v %v", gs, err)
	}
}
