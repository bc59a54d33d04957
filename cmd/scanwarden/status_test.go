package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/summary"
)

// TestStatus: the first line is the overview's sentence, healthy (exit 0)
// and failing (exit 1, the failing destination named with its cause).
func TestStatus(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	if r := runCLI(t, nil, "", "status", "--data-dir", data); r.code != exitOK || !strings.HasPrefix(r.stdout, "No destinations yet") {
		t.Fatalf("empty: %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, n := range []string{"reception", "walt-old-password"} {
		if r := runCLI(t, nil, "", "destination", "add", n, "//fs1.example.com/scans/"+n, "--user", "scan", "--password-file", pw, "--data-dir", data); r.code != exitOK {
			t.Fatalf("add %s: %s", n, r.stderr)
		}
	}
	ctx := context.Background()
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ok := smbcheck.Report{Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}
	for _, n := range []string{"reception", "walt-old-password"} {
		if err := st.Reports().AddReport(ctx, n, ok); err != nil {
			t.Fatal(err)
		}
	}
	r := runCLI(t, nil, "", "status", "--data-dir", data)
	if first, _, _ := strings.Cut(r.stdout, "\n"); r.code != exitOK || first != "All 2 destinations accept scans" {
		t.Fatalf("healthy: exit %d, %q", r.code, r.stdout)
	}
	if !strings.Contains(r.stdout, "0 scans held") || !strings.Contains(r.stdout, "no open incident") {
		t.Errorf("healthy:\n%s", r.stdout)
	}

	bad := smbcheck.Report{Verdict: smbcheck.Verdict{Cause: scanwarden.CauseBadCredentials, KyoceraCode: "1102"}}
	if err := st.Reports().AddReport(ctx, "walt-old-password", bad); err != nil {
		t.Fatal(err)
	}
	opened := time.Now().Add(-time.Minute).Truncate(time.Second)
	if _, err := st.Incidents().UpdateIncident(ctx, "walt-old-password", func(cur *incident.Incident) incident.Result {
		return incident.Next(cur, incident.Input{Kind: incident.KindCheck, At: opened, Destination: "walt-old-password",
			Verdict: bad.Verdict}, opened, time.Hour)
	}); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, nil, "", "status", "--data-dir", data)
	since := opened.Local().Format("15:04")
	if opened.Local().YearDay() != time.Now().YearDay() {
		since = opened.Local().Format("Jan 2 15:04")
	}
	want := "1 destination failing: walt-old-password — bad-credentials since " + since
	if first, _, _ := strings.Cut(r.stdout, "\n"); r.code != exitFinding || first != want {
		t.Fatalf("failing: exit %d, %q, want first line %q (%s)", r.code, r.stdout, want, r.stderr)
	}
	if !strings.Contains(r.stdout, "oldest open incident: #1 walt-old-password (bad-credentials)") {
		t.Errorf("failing:\n%s", r.stdout)
	}
	r = runCLI(t, nil, "", "status", "--json", "--data-dir", data)
	var sum summary.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil || sum.State != summary.StateFailing || sum.Sentence != want {
		t.Errorf("--json: %v %s", err, r.stdout)
	}
}
