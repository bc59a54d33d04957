package daemon

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// TestBridgeCheck: a bridged destination's check is its own client's
// verdict while the bridge works; bridge-failing (own verdict kept in the
// report's bridge) when the own check passes but the share does not serve
// or a scan is stuck; the own failure itself when the own check fails.
func TestBridgeCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	serving := &samba.ShareHealth{Cause: samba.ShareOK, Detail: "logged on and listed", At: time.Now()}
	okRun := func() smbcheck.Report {
		return smbcheck.Report{Started: time.Now(), Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}
	}
	downRun := func() smbcheck.Report {
		return smbcheck.Report{Started: time.Now(), Verdict: smbcheck.Verdict{Cause: scanwarden.CauseHostUnreachable, Summary: "Nothing answers."}}
	}
	share := func(h *samba.ShareHealth) func() *samba.ShareHealth { return func() *samba.ShareHealth { return h } }

	rep := BridgeCheck(ctx, st, share(serving), bridge.StuckAfter, "sealed", okRun)
	if !rep.OK() || rep.Bridge == nil || !rep.Bridge.Active || rep.Bridge.Own.Cause != scanwarden.CauseOK || !strings.Contains(rep.Bridge.Message, "bridged, ok") {
		t.Fatalf("working bridge: %+v %+v", rep.Verdict, rep.Bridge)
	}
	if !ownGreen(rep) {
		t.Error("a working bridge does not kick its deliveries")
	}
	rep = BridgeCheck(ctx, st, share(nil), bridge.StuckAfter, "sealed", okRun)
	if rep.Verdict.Cause != scanwarden.CauseBridgeFailing || !strings.Contains(rep.Verdict.Summary, "fallback share is not running") {
		t.Fatalf("no share: %+v", rep.Verdict)
	}
	if !ownGreen(rep) {
		t.Error("a bridge failing on its share, own check green: its deliveries are not kicked")
	}
	if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "sealed", Folder: "sealed", File: "doc.pdf", Size: 1, SHA256: "00",
		State: receiver.Failed, ReceivedAt: time.Now().Add(-2 * time.Hour), Error: "write: disk full"}); err != nil {
		t.Fatal(err)
	}
	rep = BridgeCheck(ctx, st, share(serving), bridge.StuckAfter, "sealed", okRun)
	if rep.Verdict.Cause != scanwarden.CauseBridgeFailing || !strings.Contains(rep.Verdict.Summary, "undelivered") || !strings.Contains(rep.Verdict.Summary, "disk full") {
		t.Fatalf("stuck scan: %+v", rep.Verdict)
	}
	rep = BridgeCheck(ctx, st, share(serving), bridge.StuckAfter, "sealed", downRun)
	if rep.Verdict.Cause != scanwarden.CauseHostUnreachable || rep.Bridge.Own.Cause != scanwarden.CauseHostUnreachable {
		t.Fatalf("own check fails: %+v", rep.Verdict)
	}
	if ownGreen(rep) {
		t.Error("own check failing, yet its deliveries are kicked")
	}
}

// TestBridgeCheckStuckAfter: the threshold a bridged destination's check
// is given ([receiver] bridge_stuck_after) is the one it judges by — a scan
// waiting 10 minutes fails the bridge under a 5-minute threshold, not under
// the default hour; one waiting 2 minutes fails neither.
func TestBridgeCheckStuckAfter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	serving := func() *samba.ShareHealth {
		return &samba.ShareHealth{Cause: samba.ShareOK, Detail: "logged on and listed", At: time.Now()}
	}
	okRun := func() smbcheck.Report {
		return smbcheck.Report{Started: time.Now(), Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK}}
	}
	for _, tc := range []struct {
		dest   string
		waited time.Duration
	}{{"young", 2 * time.Minute}, {"old", 10 * time.Minute}} {
		if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: tc.dest, Folder: tc.dest, File: "doc.pdf", Size: 1, SHA256: "00",
			State: receiver.Held, ReceivedAt: time.Now().Add(-tc.waited)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dest    string
		stuck   time.Duration
		failing bool
	}{
		{"young", 5 * time.Minute, false},
		{"old", 5 * time.Minute, true},
		{"old", bridge.StuckAfter, false},
	} {
		rep := BridgeCheck(ctx, st, serving, tc.stuck, tc.dest, okRun)
		if failing := rep.Verdict.Cause == scanwarden.CauseBridgeFailing; failing != tc.failing {
			t.Errorf("%s under %v: %s (%s), want failing %v", tc.dest, tc.stuck, rep.Verdict.Cause, rep.Bridge.Message, tc.failing)
		}
		if tc.failing && !strings.Contains(rep.Verdict.Summary, "(more than 5m0s)") {
			t.Errorf("%s: the verdict does not name the threshold: %s", tc.dest, rep.Verdict.Summary)
		}
	}
}

// TestOwnGreen: the kick follows scanwarden's own client, not the device's
// — a device's check that failed on a cause of its client while the own
// client passed (the bridge's offer) kicks; one whose own client failed
// too, or a plain failure, does not.
func TestOwnGreen(t *testing.T) {
	ok := smbcheck.Verdict{Cause: scanwarden.CauseOK}
	bad := smbcheck.Verdict{Cause: scanwarden.CauseShareNotFound}
	enc := smbcheck.Verdict{Cause: scanwarden.CauseEncryptionRequired}
	for _, tc := range []struct {
		name string
		rep  smbcheck.Report
		want bool
	}{
		{"green", smbcheck.Report{Verdict: ok}, true},
		{"plain failure", smbcheck.Report{Verdict: bad}, false},
		{"device fails, own passes", smbcheck.Report{Verdict: enc, Bridge: &smbcheck.Bridge{Offered: true, Own: &ok}}, true},
		{"device fails, own fails", smbcheck.Report{Verdict: enc, Bridge: &smbcheck.Bridge{Own: &bad}}, false},
	} {
		if got := ownGreen(tc.rep); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestServeBridgeStuckAfter: serve judges its bridges by the config's
// [receiver] bridge_stuck_after — the overview (summary, the page, the
// API, `status`) shows a bridge failing on a scan waiting 10 minutes under
// a 5-minute threshold; after a reload with a 20-minute one the same
// bridge is ok.
func TestServeBridgeStuckAfter(t *testing.T) {
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\n[receiver]\nmax_retry = \"2m\"\nbridge_stuck_after = \"5m\"\n")
	m, _ := startMain(t, cfg)
	ctx := context.Background()
	st := m.Store()
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "sealed", Host: "127.0.0.1", Port: closedPort(t), Share: "scans",
		User: "alice", Password: scanwarden.NewSecret("pw"), Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Destinations().SetBridged(ctx, "sealed", true); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "sealed", Folder: "sealed", File: "doc.pdf", Size: 1, SHA256: "00",
		State: receiver.Held, ReceivedAt: time.Now().Add(-10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	bridgeOf := func() bridge.Health {
		t.Helper()
		sum, err := webBackend{m}.Summary(ctx)
		if err != nil || len(sum.Bridges) != 1 {
			t.Fatalf("summary: %v, bridges %+v", err, sum.Bridges)
		}
		return sum.Bridges[0].Health
	}
	if h := bridgeOf(); h.OK() || !strings.Contains(h.Why, "undelivered (more than 5m0s)") {
		t.Fatalf("under bridge_stuck_after 5m, a scan waiting 10m: %s %q", h.State, h.Why)
	}
	if err := os.WriteFile(cfg.File, []byte("data_dir = \""+cfg.DataDir+"\"\nlisten = \"127.0.0.1:0\"\n[checks]\ninterval = \"1h\"\n[receiver]\nmax_retry = \"2m\"\nbridge_stuck_after = \"20m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if h := bridgeOf(); strings.Contains(h.Why, "undelivered") {
		t.Fatalf("under bridge_stuck_after 20m, a scan waiting 10m: %s %q", h.State, h.Why)
	}
}
