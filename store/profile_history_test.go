package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// A kept report carries the profile its check replayed, with the sources,
// and check_history says whose client it was; a report with scanwarden's
// own client says so; one from before either was recorded says nothing.
func TestReportKeepsReplayedProfile(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: "front", Host: "fs1", Share: "scans", User: "u", Password: scanwarden.NewSecret("p")}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	seen := now.Add(-time.Hour)
	device := &smbcheck.Profile{Device: "mfp01", Summary: "SMB 2.1 at most, no encryption, writes pdf", Values: []smbcheck.ProfileSource{
		{Field: "max_dialect", Value: "2.1", Origin: "seen", SeenAt: &seen}, {Field: "encryption", Value: "no", Origin: "admin"}, {Field: "file_type", Value: "pdf", Origin: "default"}}}
	for i, p := range []*smbcheck.Profile{device, {Own: true}, nil} {
		rep := smbcheck.Report{Started: now.Add(time.Duration(i) * time.Second), Target: scanwarden.TargetInfo{Host: "fs1"}, Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}, Profile: p}
		if err := s.Reports().AddReport(ctx, "front", rep); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT profile FROM check_history WHERE destination = 'front' ORDER BY at`)
	if err != nil {
		t.Fatal(err)
	}
	var got []sql.NullString
	for rows.Next() {
		var p sql.NullString
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	rows.Close()
	want := []sql.NullString{{String: "device mfp01's profile: SMB 2.1 at most, no encryption, writes pdf", Valid: true}, {String: "scanwarden's own client (no device profile)", Valid: true}, {}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("check_history.profile %+v, want %+v", got, want)
	}
	reps, err := s.Reports().Reports(ctx, "front", 10)
	if err != nil || len(reps) != 3 {
		t.Fatalf("reports: %v, %d", err, len(reps))
	}
	// newest first: the one that recorded nothing, then own, then the device's
	if p := reps[2].Report.Profile; p == nil || p.Device != "mfp01" || len(p.Values) != 3 || p.Values[0].Origin != "seen" || p.Values[0].SeenAt == nil || !p.Values[0].SeenAt.Equal(seen) {
		t.Errorf("stored device profile %+v", reps[2].Report.Profile)
	}
	if v := reps[2].View().Replayed; v != want[0].String {
		t.Errorf("view of the device's check: replayed %q", v)
	}
	if v := reps[1].View().Replayed; v != want[1].String {
		t.Errorf("view of the own client's check: replayed %q", v)
	}
	if v := reps[0].View().Replayed; v != "" {
		t.Errorf("view of a check that recorded nothing: replayed %q", v)
	}
}
