package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
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

	rep := BridgeCheck(ctx, st, share(serving), "sealed", okRun)
	if !rep.OK() || rep.Bridge == nil || !rep.Bridge.Active || rep.Bridge.Own.Cause != scanwarden.CauseOK || !strings.Contains(rep.Bridge.Message, "bridged, ok") {
		t.Fatalf("working bridge: %+v %+v", rep.Verdict, rep.Bridge)
	}
	if !ownGreen(rep) {
		t.Error("a working bridge does not kick its deliveries")
	}
	rep = BridgeCheck(ctx, st, share(nil), "sealed", okRun)
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
	rep = BridgeCheck(ctx, st, share(serving), "sealed", okRun)
	if rep.Verdict.Cause != scanwarden.CauseBridgeFailing || !strings.Contains(rep.Verdict.Summary, "undelivered") || !strings.Contains(rep.Verdict.Summary, "disk full") {
		t.Fatalf("stuck scan: %+v", rep.Verdict)
	}
	rep = BridgeCheck(ctx, st, share(serving), "sealed", downRun)
	if rep.Verdict.Cause != scanwarden.CauseHostUnreachable || rep.Bridge.Own.Cause != scanwarden.CauseHostUnreachable {
		t.Fatalf("own check fails: %+v", rep.Verdict)
	}
	if ownGreen(rep) {
		t.Error("own check failing, yet its deliveries are kicked")
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
