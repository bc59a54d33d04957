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
	"github.com/scanwarden/scanwarden/receiver"
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

// TestStatusConfig: status and destination list/show judge a bridge by
// [receiver] bridge_stuck_after of --config, the config serve runs on — a
// scan waiting 10 minutes is stuck under its 5 minutes, not under the
// default hour — and take its data_dir; destination add takes its
// allow_link_local; a --config that cannot be read ends them (exit 2,
// naming the file).
func TestStatusConfig(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	cfg := filepath.Join(dir, "scanwarden.toml")
	if err := os.WriteFile(cfg, []byte("data_dir = \""+data+"\"\nallow_link_local = true\n[receiver]\nmax_retry = \"2m\"\nbridge_stuck_after = \"5m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := cliIn(t, data)
	cli(exitOK, "destination", "add", "sealed", "//fs1.example.com/scans", "--user", "scan", "--password-file", pw)
	cli(exitOK, "destination", "bridge", "sealed")
	ctx := context.Background()
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "sealed", Folder: "sealed", File: "doc.pdf", Size: 1, SHA256: "00",
		State: receiver.Held, ReceivedAt: time.Now().Add(-10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	const stuck = "a scan has waited 10m0s undelivered (more than 5m0s)"
	for _, args := range [][]string{{"status"}, {"destination", "list"}, {"destination", "show", "sealed"}} {
		r := runCLI(t, nil, "", append(args, "--data-dir", data)...)
		if r.code == exitUsage || strings.Contains(r.stdout, "undelivered") {
			t.Errorf("%v without --config (bridge_stuck_after 1h): exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		r = runCLI(t, nil, "", append(args, "--config", cfg)...) // the data dir from the config
		if r.code == exitUsage || !strings.Contains(r.stdout, stuck) {
			t.Errorf("%v --config (bridge_stuck_after 5m): exit %d, want %q\n%s%s", args, r.code, stuck, r.stdout, r.stderr)
		}
	}
	link := []string{"destination", "add", "metadata", "//169.254.169.254/scans", "--user", "scan", "--password-file", pw}
	if r := runCLI(t, nil, "", append(link, "--data-dir", data)...); r.code != exitUsage || !strings.Contains(r.stderr, "link-local") {
		t.Errorf("a link-local destination without --config: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "", append(link, "--config", cfg)...); r.code != exitOK {
		t.Errorf("a link-local destination under allow_link_local of --config: exit %d, %s", r.code, r.stderr)
	}
	missing := filepath.Join(dir, "nosuch.toml")
	for _, args := range [][]string{{"status"}, {"destination", "list"}} {
		r := runCLI(t, nil, "", append(args, "--config", missing, "--data-dir", data)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "config: open "+missing+": ") { // the path as typed, not quoted
			t.Errorf("%v --config %s: exit %d, %s", args, missing, r.code, r.stderr)
		}
	}
}
