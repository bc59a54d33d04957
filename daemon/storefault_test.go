package daemon

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

// A watch write cut off by the watch's own end (a reload or Close cancels
// its context) is no store failure: the "store" fault, which nothing
// clears until a restart, is not set. The store wraps the context's error
// with the operation ("record device seen …: context canceled").
func TestWatchRecordCancelIsNoStoreFault(t *testing.T) {
	cfg := testConfig(t, "")
	st := testStore(t, cfg)
	t.Cleanup(func() { st.Close() })
	fs := newFaults(time.Now)
	p := &watchPart{env: env{st: st, faults: fs, log: slog.New(slog.DiscardHandler)}, cfg: cfg}
	wc, err := p.watcherConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := snmp.NewRecorder(wc.Store, nil, wc.OnEvent, wc.OnStoreError)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rec.Seen(ctx, "10.0.0.5", time.Now()); err == nil {
		t.Fatal("RecordSeen under a cancelled context succeeded")
	}
	if err := rec.Device(ctx, snmp.Inventory{Address: "10.0.0.5"}); err == nil {
		t.Fatal("RecordDevice under a cancelled context succeeded")
	}
	for _, f := range fs.list() {
		if f.Part == "store" {
			t.Errorf("store fault after a cancelled write: %s", f.Message)
		}
	}
}
