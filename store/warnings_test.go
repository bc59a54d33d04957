package store

import (
	"context"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/warning"
)

// TestUpdateWarnings: a group is raised by its first destination and
// cleared by its last; the history handed to the judgement holds the
// volume's earlier samples, the account as this destination's previous
// check saw it and the ledger's logons since; a removed destination's
// warnings are not listed.
func TestUpdateWarnings(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	for _, n := range []string{"a", "b"} {
		if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: n, Host: "fs1", Share: "scans", User: `KYOLAB\scan`}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	w := warning.Warning{Kind: warning.PasswordExpiresSoon, Subject: `KYOLAB\scan`, Headline: "soon", KyoceraCode: "1102",
		Evidence: smbcheck.Evidence{"x": 1}}
	var seen []warning.History
	notified := true
	update := func(dest string, at time.Time, ws ...warning.Warning) warning.Update {
		t.Helper()
		o := warning.Observation{At: at, Passed: true, Account: `KYOLAB\scan`, BadPwdCount: 1, Volume: `\\fs1\scans`, HasFree: true, Free: 100}
		up, err := s.Warnings().UpdateWarnings(ctx, dest, "mfp1", o, notified, func(h warning.History) []warning.Warning {
			seen = append(seen, h)
			return ws
		})
		if err != nil {
			t.Fatal(err)
		}
		return up
	}
	if up := update("a", t0, w); len(up.Raised) != 1 || len(up.Cleared) != 0 {
		t.Fatalf("first: %+v", up)
	}
	if up := update("b", t0.Add(time.Minute), w); len(up.Raised)+len(up.Cleared) != 0 {
		t.Fatalf("second destination joins silently: %+v", up)
	}
	// A failed logon scanwarden sent for the account in between.
	id, _, err := s.Ledger().Reserve(ctx, smbclient.Attempt{Account: `kyolab\scan`, Form: "f", At: t0.Add(2 * time.Minute)}, t0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ledger().Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Failed, Cause: scanwarden.CauseBadCredentials}); err != nil {
		t.Fatal(err)
	}
	if up := update("a", t0.Add(3*time.Minute)); len(up.Raised)+len(up.Cleared) != 0 {
		t.Fatalf("b still holds it: %+v", up)
	}
	h := seen[2]
	if len(h.Volume) != 2 || h.Account == nil || !h.Account.At.Equal(t0) || h.Account.BadPwdCount != 1 || len(h.OwnFailures) != 1 ||
		len(h.Before) != 1 || h.Before[0].Evidence["x"] != float64(1) {
		t.Errorf("history %+v", h)
	}
	rows, err := s.Warnings().Warnings(ctx)
	if err != nil || len(rows) != 1 || rows[0].Destination != "b" || rows[0].Device != "mfp1" || !rows[0].Since.Equal(s.now()) && rows[0].Since.IsZero() {
		t.Fatalf("rows %+v %v", rows, err)
	}
	if up := update("b", t0.Add(4*time.Minute)); len(up.Cleared) != 1 || up.Cleared[0].Key() != w.Key() {
		t.Fatalf("last one clears: %+v", up)
	}
	// `check` (telling nobody) sees it first: the daemon still tells, once.
	notified = false
	if up := update("a", t0.Add(5*time.Minute), w); len(up.Raised) != 1 {
		t.Fatalf("check: %+v", up)
	}
	notified = true
	if up := update("a", t0.Add(6*time.Minute), w); len(up.Raised) != 1 {
		t.Fatalf("daemon after check: %+v", up)
	}
	if up := update("a", t0.Add(7*time.Minute), w); len(up.Raised) != 0 {
		t.Fatalf("told twice: %+v", up)
	}
	if err := s.Destinations().RemoveDestination(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.Warnings().Warnings(ctx); len(rows) != 0 {
		t.Errorf("removed destination still listed: %+v", rows)
	}
}
