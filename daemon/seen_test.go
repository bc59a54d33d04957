package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/snmp/snmptest"
	"github.com/scanwarden/scanwarden/web"
)

// A device that answers every poll (snmpsim on loopback) is shown as
// answering all along: polled by `serve` for ten intervals of 2 s — longer
// than the 2 intervals + 10 s after which a device not heard from counts
// as silent — /api/v1/devices says reachable with no fault and a last_seen
// that moves with the polls, and /metrics has scanwarden_device_up 1, at
// every interval. (It is identified once, at the first poll: a "seen" that
// moved only then went stale after 14 s — as it did while the watcher's
// own sink did not hand the poller's answered polls on.)
func TestServeDeviceReachableTenIntervals(t *testing.T) {
	const every = 2 * time.Second
	// Not t.TempDir(): snmpsimd runs as nobody and must read it.
	dir, err := os.MkdirTemp("", "swseen")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	writeFixture(t, dir, labConsole(t, "Ready to print.", ""))
	addr := "127.0.0.1:" + itoa(snmptest.StartSim(t, dir, 1)[0])

	ctx := context.Background()
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\n[snmp]\ninterval = \""+every.String()+"\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Store().Devices().PutDevice(ctx, registry.Device{Name: "MFP-SEEN", Address: addr,
		SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("servelab")}}); err != nil {
		t.Fatal(err)
	}
	m.SyncDevices(ctx)
	tok, err := web.CreateToken(ctx, m.Store().Auth(), "prom", "admin", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+m.Addr().String()+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", path, resp.Status, b)
		}
		return string(b)
	}
	device := func() registry.DeviceView {
		t.Helper()
		var body struct{ Devices []registry.DeviceView }
		if err := json.Unmarshal([]byte(get("/api/v1/devices")), &body); err != nil {
			t.Fatal(err)
		}
		for _, d := range body.Devices {
			if d.Name == "MFP-SEEN" {
				return d
			}
		}
		t.Fatalf("MFP-SEEN not in /api/v1/devices")
		return registry.DeviceView{}
	}
	up := func() bool {
		return strings.Contains(get("/metrics"), `scanwarden_device_up{device="MFP-SEEN"} 1`)
	}
	waitUntil(t, 15*time.Second, "the first answered poll", func() bool { return device().Reachable })

	start := time.Now()
	var seen []time.Time
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 1; i <= 10; i++ {
		<-tick.C
		d := device()
		if !d.Reachable || d.Fault != "" || !up() {
			t.Errorf("after %v: reachable %v, fault %q, device_up 1: %v", time.Since(start).Round(time.Second), d.Reachable, d.Fault, up())
		}
		if n := len(seen); n == 0 || d.LastSeen.After(seen[n-1]) {
			seen = append(seen, d.LastSeen)
		}
	}
	t.Logf("%v of polls every %v: last_seen moved %d times", time.Since(start).Round(time.Second), every, len(seen)-1)
	if len(seen) < 6 { // a poll and the look at it can fall in one interval: not every look sees a new one
		t.Errorf("last_seen moved %d times in ten intervals, want at least 5: %v", len(seen)-1, seen)
	}
}
