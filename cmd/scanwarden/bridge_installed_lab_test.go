package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/summary"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabInstalledBridge is issue 29's bridge, end to end in the installed
// layout (serve as an unprivileged daemon user, root's smbd for the
// fallback share; smb2srv's `sealed` demands SMB3 encryption):
//
//  1. An MFP stand-in (smbclient limited to SMB 2.1, no encryption) scans
//     to the fallback share; the daemon learns its client, its destination
//     on `sealed` then fails as that client (encryption-required, 1102)
//     and the report offers the bridge (scanwarden's own client passed),
//     naming `scanwarden destination bridge sealed`.
//  2. Deliveries are judged by scanwarden's own client: a scan whose
//     delivery failed (the folder unwritable for a moment) and waits out a
//     10-minute back-off is delivered at the next check once the folder
//     works again — the check fails as the MFP but scanwarden's client
//     passes (the old code waited for a check the MFP passes: never).
//  3. `destination bridge sealed` (as the daemon's user): the next check
//     is the bridge's own, green; the incident of encryption-required
//     closes at once; the stand-in's next scan is delivered to `sealed`
//     (which serves only encrypted SMB3 sessions) and read back from the
//     server byte for byte; `status` shows the bridge ok, no incident open.
//  4. The real folder made unwritable: the bridge's own check fails and
//     its own incident opens (no-write-permission, not the MFP's cause).
func TestLabInstalledBridge(t *testing.T) {
	var lab struct{ smb2IP, password string }
	// the real folder, on smb2srv's disk (the lab's own state folder)
	folder := filepath.Join(testlab.Require(t).Dir, "smb2srv", "sealed", "bridge")
	os.RemoveAll(folder)
	if err := os.MkdirAll(folder, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(folder, 0o777)
	t.Cleanup(func() { os.Chmod(folder, 0o777); os.RemoveAll(folder) })
	in := startInstalled(t, `listen = "127.0.0.1:0"
[checks]
interval = "10s"
jitter = "0s"
timeout = "10s"
[incidents]
close_after = "1h"`, `retry = "10m"
max_retry = "10m"`, func(st *store.Store) {
		ctx := t.Context()
		if err := st.Devices().PutDevice(ctx, registry.Device{Name: "mfp21", Address: os.Getenv("SWLAB_CLI_IP"), Model: "TASKalfa 3253ci"}); err != nil {
			t.Fatal(err)
		}
		lab.smb2IP, lab.password = os.Getenv("SWLAB_SMB2_IP"), os.Getenv("SWLAB_PASSWORD")
		if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "sealed", Host: lab.smb2IP, Share: "sealed", Path: "bridge",
			User: "scanuser", Password: scanwarden.NewSecret(lab.password), Device: "mfp21", Source: registry.SourceAdded}); err != nil {
			t.Fatal(err)
		}
	})
	ctx := t.Context()
	writable := func(on bool) {
		mode := os.FileMode(0o555)
		if on {
			mode = 0o777
		}
		if err := os.Chmod(folder, mode); err != nil {
			t.Fatal(err)
		}
	}
	pdf := func(n string) []byte {
		return []byte("%PDF-1.4\n% scan " + n + "\n1 0 obj\n<< >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
	}
	scanState := func(file string) (receiver.Scan, bool) {
		var got receiver.Scan
		ok := in.read(func(st *store.Store) bool {
			d := "sealed"
			rows, err := st.Scans().Scans(ctx, receiver.ScanQuery{Destination: &d})
			if err != nil {
				return false
			}
			for _, r := range rows {
				if r.File == file {
					got = r
					return true
				}
			}
			return false
		})
		return got, ok
	}
	reportsAfter := func(at time.Time, fn func(r registry.Report) bool) bool {
		return in.read(func(st *store.Store) bool {
			rs, err := st.Reports().Reports(ctx, "sealed", 20)
			if err != nil {
				return false
			}
			for _, r := range rs {
				if r.At.After(at) && fn(r) {
					return true
				}
			}
			return false
		})
	}
	openIncident := func() *incident.Incident {
		var inc *incident.Incident
		in.read(func(st *store.Store) bool {
			is, err := st.Incidents().Incidents(ctx, store.IncidentFilter{State: incident.StateOpen, Limit: 10})
			if err == nil {
				for i := range is {
					if is[i].Destination == "sealed" {
						inc = &is[i]
					}
				}
			}
			return true
		})
		return inc
	}

	// 1. The stand-in scans once: its client is learned, the scan is
	// delivered (scanwarden's own client), and the checks replaying the
	// MFP fail with encryption-required and offer the bridge.
	in.scan("sealed", "doc0001.pdf", pdf("1"))
	sent := time.Now()
	in.until("the first scan delivered", 60*time.Second, func() bool {
		sc, ok := scanState("doc0001.pdf")
		return ok && sc.State == receiver.Delivered
	})
	var offer registry.Report
	in.until("a check as the MFP that offers the bridge", 90*time.Second, func() bool {
		return reportsAfter(sent, func(r registry.Report) bool {
			if r.Cause == scanwarden.CauseEncryptionRequired && r.Report.Bridge != nil && r.Report.Bridge.Offered {
				offer = r
				return true
			}
			return false
		})
	})
	b := offer.Report.Bridge
	if offer.KyoceraCode != "1102" || b.DeviceCause != scanwarden.CauseEncryptionRequired || b.Own == nil || b.Own.Cause != scanwarden.CauseOK ||
		b.Command != "scanwarden destination bridge sealed" ||
		!strings.Contains(b.Message, "the MFP cannot meet this server's demands (encryption-required); scanwarden can: bridge it") {
		t.Fatalf("the offer: %s (panel %s), bridge %+v", offer.Cause, offer.KyoceraCode, b)
	}
	if inc := openIncident(); inc == nil || inc.Cause != scanwarden.CauseEncryptionRequired {
		t.Fatalf("open incident before the bridge: %+v, want encryption-required", inc)
	}
	if out, code := in.cli("check", "--destination", "sealed", "--data-dir", in.data); code != exitFinding ||
		!strings.Contains(out, "verdict: encryption-required") || !strings.Contains(out, "bridge it: scanwarden destination bridge sealed") {
		t.Errorf("check --destination as the MFP (exit %d):\n%s", code, out)
	}
	if out, code := in.cli("destination", "show", "sealed", "--data-dir", in.data); code != exitOK ||
		!strings.Contains(out, "bridge: the MFP cannot meet this server's demands (encryption-required)") ||
		!strings.Contains(out, "bridge it: scanwarden destination bridge sealed") {
		t.Errorf("destination show with the offer (exit %d):\n%s", code, out)
	}

	// 2. A delivery that failed waits out a 10-minute back-off; once the
	// folder works, the next check (failing as the MFP, passing as
	// scanwarden) lets it go at once.
	writable(false)
	in.scan("sealed", "doc0002.pdf", pdf("2"))
	in.until("the second scan's delivery failed", 60*time.Second, func() bool {
		sc, ok := scanState("doc0002.pdf")
		return ok && sc.State == receiver.Failed && sc.NextAttempt.After(time.Now().Add(5*time.Minute))
	})
	writable(true)
	fixed := time.Now()
	in.until("the failed scan delivered once scanwarden's own client passes", 60*time.Second, func() bool {
		sc, ok := scanState("doc0002.pdf")
		return ok && sc.State == receiver.Delivered
	})
	t.Logf("a scan held by the back-off delivered %v after the folder was fixed (the MFP's check still fails)", time.Since(fixed).Round(time.Millisecond))

	// 3. Bridge it, as the daemon's user.
	out, code := in.cli("destination", "bridge", "sealed", "--data-dir", in.data)
	if code != exitOK || !strings.Contains(out, "sealed: bridged") {
		t.Fatalf("destination bridge: exit %d\n%s", code, out)
	}
	bridged := time.Now()
	in.until("the bridge's own check, green", 90*time.Second, func() bool {
		return reportsAfter(bridged, func(r registry.Report) bool {
			return r.Cause == scanwarden.CauseOK && r.Report.Bridge != nil && r.Report.Bridge.Active
		})
	})
	in.until("the encryption-required incident closed by the bridge", 30*time.Second, func() bool { return openIncident() == nil })
	in.scan("sealed", "doc0003.pdf", pdf("3"))
	scanned := time.Now()
	var third receiver.Scan
	in.until("the bridged scan delivered", 60*time.Second, func() bool {
		sc, ok := scanState("doc0003.pdf")
		third = sc
		return ok && sc.State == receiver.Delivered
	})
	t.Logf("bridged scan: put on the fallback share → delivered to sealed (SMB3, encrypted), verified: %v (quiet window 1 s)",
		third.DeliveredAt.Sub(scanned).Round(time.Millisecond))
	// read it back from the server: the share serves only encrypted SMB3
	back := filepath.Join(in.dir, "back.pdf")
	if o, err := exec.Command("smbclient", "//"+lab.smb2IP+"/sealed", "-U", "scanuser%"+lab.password, "--use-kerberos=disabled",
		"-m", "SMB3", "--option=client smb encrypt=required", "-c", `cd bridge; get "`+third.RemoteName+`" "`+back+`"`).CombinedOutput(); err != nil ||
		bytes.Contains(o, []byte("NT_STATUS_")) {
		t.Fatalf("read back %s: %v: %s", third.RemoteName, err, o)
	}
	if got, _ := os.ReadFile(back); !bytes.Equal(got, pdf("3")) {
		t.Fatalf("read back %q bytes, want the scan's %d", got, len(pdf("3")))
	}
	var sum summary.Summary
	in.until("status shows the bridge ok", 30*time.Second, func() bool {
		out, _ := in.cli("status", "--json", "--data-dir", in.data)
		sum = summary.Summary{}
		return json.Unmarshal([]byte(out), &sum) == nil && len(sum.Bridges) == 1 && sum.Bridges[0].Health.OK() &&
			sum.Bridges[0].Health.LastDelivery == "delivered" && sum.Bridges[0].Health.Waiting == 0
	})
	if h := sum.Bridges[0].Health; !h.ShareServing || h.OwnCheck != scanwarden.CauseOK || sum.OldestIncident != nil {
		t.Errorf("status: bridge %+v, oldest incident %+v", h, sum.OldestIncident)
	}
	if out, _ := in.cli("status", "--data-dir", in.data); !strings.Contains(out, "bridge: sealed — bridged, ok; share serving; own check ok") ||
		!strings.Contains(out, "no open incident") {
		t.Errorf("status:\n%s", out)
	}

	// 4. The bridge itself fails: the real folder unwritable. Its own
	// check fails and its own incident opens.
	writable(false)
	broken := time.Now()
	in.until("the bridge's own incident", 60*time.Second, func() bool {
		inc := openIncident()
		return inc != nil && inc.LastFailure.After(broken)
	})
	if inc := openIncident(); inc.Cause != scanwarden.CauseNoWritePermission {
		t.Errorf("the bridge's incident: %s, want %s (the bridge's own failure, not the MFP's cause)", inc.Cause, scanwarden.CauseNoWritePermission)
	}
	out, _ = in.cli("destination", "show", "sealed", "--json", "--data-dir", in.data)
	var shown destinationJSON
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.Bridge == nil || shown.Bridge.OK() ||
		!strings.Contains(shown.Bridge.Why, "own check of the real folder fails (no-write-permission)") {
		t.Errorf("destination show of the failing bridge: %v, bridge %+v", err, shown.Bridge)
	}
	writable(true)
}

// TestLabInstalledBridgeKill9 is the bridge's nothing-lost: a bridged
// destination on `sealed` (encrypted SMB3 only), the MFP stand-in (SMB
// 2.1, no encryption) sends 12 scans of 2 MiB to the fallback share, and
// serve is killed with SIGKILL three times while a scan is being
// delivered (and started again; root's smbd runs on). Every scan ends
// delivered exactly once: the real folder holds 12 files, each read back
// over encrypted SMB3 with its SHA-256, and no temporary file.
func TestLabInstalledBridgeKill9(t *testing.T) {
	folder := filepath.Join(testlab.Require(t).Dir, "smb2srv", "sealed", "kill9")
	os.RemoveAll(folder)
	if err := os.MkdirAll(folder, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(folder, 0o777)
	t.Cleanup(func() { os.RemoveAll(folder) })
	smb2IP, password := os.Getenv("SWLAB_SMB2_IP"), os.Getenv("SWLAB_PASSWORD")
	in := startInstalled(t, `listen = "127.0.0.1:0"
[checks]
interval = "10s"
jitter = "0s"
timeout = "10s"`, "", func(st *store.Store) {
		ctx := t.Context()
		if err := st.Devices().PutDevice(ctx, registry.Device{Name: "mfp21", Address: os.Getenv("SWLAB_CLI_IP")}); err != nil {
			t.Fatal(err)
		}
		if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "sealed", Host: smb2IP, Share: "sealed", Path: "kill9",
			User: "scanuser", Password: scanwarden.NewSecret(password), Device: "mfp21", Source: registry.SourceAdded}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Destinations().SetBridged(ctx, "sealed", true); err != nil {
			t.Fatal(err)
		}
	})
	ctx := t.Context()
	const n = 12
	want := map[string]string{} // name → sha256
	var bodies [][]byte
	for i := range n {
		var b bytes.Buffer
		fmt.Fprintf(&b, "%%PDF-1.4\n%% scan %d\n", i)
		line := strings.Repeat(string(rune('a'+i)), 100)
		for b.Len() < 2<<20 {
			fmt.Fprintf(&b, "%% %s %d\n", line, b.Len())
		}
		b.WriteString("1 0 obj\n<< >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
		name := fmt.Sprintf("job%04d.pdf", i)
		sum := sha256.Sum256(b.Bytes())
		want[name] = hex.EncodeToString(sum[:])
		bodies = append(bodies, b.Bytes())
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for i, b := range bodies {
			in.scan("sealed", fmt.Sprintf("job%04d.pdf", i), b)
		}
	}()
	states := func() map[receiver.State]int {
		out := map[receiver.State]int{}
		in.read(func(st *store.Store) bool {
			d := "sealed"
			rows, err := st.Scans().Scans(ctx, receiver.ScanQuery{Destination: &d})
			for _, r := range rows {
				out[r.State]++
			}
			return err == nil
		})
		return out
	}
	kills, delivered := 0, 0
	for kills < 3 {
		deadline := time.Now().Add(60 * time.Second)
		// a later scan each time: one more delivered since the last kill
		for s := states(); s[receiver.Delivering] == 0 || s[receiver.Delivered] <= delivered; s = states() {
			if time.Now().After(deadline) {
				t.Fatalf("no delivery in flight to kill (kill %d): %v", kills+1, states())
			}
			time.Sleep(20 * time.Millisecond)
		}
		delivered = states()[receiver.Delivered]
		in.kill9()
		kills++
		t.Logf("kill -9 %d while delivering: %v", kills, states())
	}
	<-sent
	in.until("every scan delivered", 120*time.Second, func() bool { return states()[receiver.Delivered] == n })
	if s := states(); len(s) != 1 {
		t.Errorf("scan states %v, want %d delivered and nothing else", s, n)
	}
	// the real folder, read back over encrypted SMB3
	back := filepath.Join(in.dir, "back")
	os.MkdirAll(back, 0o755)
	if o, err := exec.Command("smbclient", "//"+smb2IP+"/sealed", "-U", "scanuser%"+password, "--use-kerberos=disabled", "-m", "SMB3",
		"--option=client smb encrypt=required", "-c", "cd kill9; lcd "+back+"; prompt off; mget *").CombinedOutput(); err != nil ||
		bytes.Contains(o, []byte("NT_STATUS_")) {
		t.Fatalf("read back: %v: %s", err, o)
	}
	files, _ := os.ReadDir(back)
	got := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(back, f.Name()))
		sum := sha256.Sum256(b)
		got[f.Name()] = hex.EncodeToString(sum[:])
	}
	if len(got) != n {
		t.Errorf("%d files in the real folder, want %d: %v", len(got), n, slices.Sorted(maps.Keys(got)))
	}
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("%s: sha256 %q, want %s", name, got[name], sum)
		}
	}
}
