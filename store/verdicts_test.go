package store

import (
	"context"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
)

func TestLatestVerdicts(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	defer s.Close()
	for _, n := range []string{"Reception", "finance", "never"} {
		if err := s.Destinations().PutDestination(ctx, registry.Destination{Name: n, Host: "fs1", Share: "scans", User: "u", Source: registry.SourceAdded}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	add := func(dest string, at time.Time, cause scanwarden.Cause, form string) {
		rep := smbcheck.Report{Started: at, Verdict: smbcheck.Verdict{Cause: cause, KyoceraCode: "1102", Summary: "s " + string(cause), Fix: "fix " + string(cause)},
			Steps: []smbcheck.Step{{ID: "tcp", Status: smbcheck.StatusOK}}}
		if form != "" {
			rep.WorkingForm = &smbclient.Form{Typed: form}
		}
		if err := s.Reports().AddReport(ctx, dest, rep); err != nil {
			t.Fatal(err)
		}
	}
	add("Reception", t0, scanwarden.CauseBadCredentials, "")
	add("Reception", t0.Add(time.Hour), scanwarden.CauseWrongUserFormat, `KYOLAB\alice`)
	add("Reception", t0.Add(-time.Hour), scanwarden.CauseOK, "") // older, stored later
	add("finance", t0, scanwarden.CauseOK, "")
	got, err := s.Reports().LatestVerdicts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := got["reception"]
	if len(got) != 2 || !r.At.Equal(t0.Add(time.Hour)) || r.Verdict.Cause != scanwarden.CauseWrongUserFormat || r.Verdict.Fix != "fix wrong-user-format" ||
		r.Verdict.KyoceraCode != "1102" || r.WorkingForm != `KYOLAB\alice` || got["finance"].Verdict.Cause != scanwarden.CauseOK {
		t.Fatalf("%+v", got)
	}
	// The same as LatestReport says.
	lr, _, _ := s.Reports().LatestReport(ctx, "Reception")
	if lr.Report.Verdict.Cause != r.Verdict.Cause || !lr.At.Equal(r.At) {
		t.Errorf("LatestReport %+v", lr)
	}
}
