package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/registry"
)

// TestSyncDevicesOutlivesRequest: the web import calls SyncDevices with
// its request's context; the SNMP watch it opens for the first device
// must run on after that request has ended (it ran under the request's
// context before, and stopped with it until the next reload).
func TestSyncDevicesOutlivesRequest(t *testing.T) {
	m := &Main{Config: new(testConfig(t, "[snmp]\ninterval = \"1s\"\n")), Stderr: &syncBuffer{}}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before := m.live.get().watch.watcher()
	if before != nil {
		t.Fatal("a watch runs with no device registered")
	}
	// A device added (as the CLI does), then an import's request.
	if err := m.Store().Devices().PutDevice(context.Background(), registry.Device{Name: "mfp01", Address: "127.0.0.1:9"}); err != nil {
		t.Fatal(err)
	}
	req, endRequest := context.WithCancel(context.Background())
	m.SyncDevices(req)
	endRequest()
	w := m.live.get().watch.watcher()
	if w == nil {
		t.Fatal("SyncDevices opened no watch for the new device")
	}
	select {
	case <-w.Done():
		t.Fatalf("the watch ended with the request: %v", w.Err())
	case <-time.After(1500 * time.Millisecond):
	}
}
