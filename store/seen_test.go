package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

// TestRecordSeen: an answered poll moves a known device's last_seen; an
// unknown address is left to RecordDevice.
func TestRecordSeen(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sink := st.Events().SNMP(0)
	first := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := sink.RecordDevice(ctx, snmp.Inventory{Address: "10.77.0.50:161", Kyocera: true, SeenAt: first}); err != nil {
		t.Fatal(err)
	}
	later := first.Add(90 * time.Minute)
	if err := sink.RecordSeen(ctx, "10.77.0.50:161", later); err != nil {
		t.Fatal(err)
	}
	if err := sink.RecordSeen(ctx, "10.77.0.99:161", later); err != nil {
		t.Fatal(err)
	}
	devs, err := st.Events().SNMPDevices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || !devs[0].SeenAt.Equal(later) {
		t.Fatalf("devices %+v, want one seen at %s", devs, later)
	}
}
