package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

func TestSNMPSink(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sink := s.SNMP(30 * time.Minute)
	hostile := "<script>alert(1)</script>'; DROP TABLE snmp_events; --"
	inv := snmp.Inventory{Address: "10.77.0.40:161", Kyocera: true, Model: "TASKalfa 3253ci", Serial: "W4X0A20002", SysName: hostile, SeenAt: time.Unix(1000, 0)}
	if err := sink.RecordDevice(ctx, inv); err != nil {
		t.Fatal(err)
	}
	inv.Firmware = "2TN_S0IS.C01.003"
	if err := sink.RecordDevice(ctx, inv); err != nil {
		t.Fatal(err)
	}
	devs, err := s.SNMPDevices(ctx)
	if err != nil || len(devs) != 1 || devs[0].SysName != hostile || devs[0].Firmware == "" || !devs[0].Kyocera {
		t.Fatalf("devices %+v %v", devs, err)
	}

	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	ev := snmp.Event{Device: inv.Address, Time: t0, Code: "1102", Text: hostile, Source: snmp.SourceConsole, Key: "panel:abc",
		Detail: map[string]string{"oid": "1.3.6.1.2.1.43.16.5.1.2"}}
	for i, c := range []struct {
		at    time.Time
		fresh bool
	}{
		{t0, true},
		{t0.Add(10 * time.Minute), false}, // still on the panel
		{t0.Add(35 * time.Minute), false}, // refreshed at +10m: within 30m of the last sighting
		{t0.Add(2 * time.Hour), true},     // quiet for more than the window: a new occurrence
	} {
		ev.Time = c.at
		fresh, err := sink.RecordEvent(ctx, ev)
		if err != nil || fresh != c.fresh {
			t.Fatalf("sighting %d: fresh=%v err=%v, want %v", i, fresh, err, c.fresh)
		}
	}
	evs, err := s.SNMPEvents(ctx, inv.Address, time.Time{}, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %+v %v", evs, err)
	}
	if evs[1].Count != 3 || !evs[1].LastSeen.Equal(t0.Add(35*time.Minute)) || evs[1].Text != hostile || evs[1].Detail["oid"] == "" {
		t.Errorf("first occurrence: %+v", evs[1])
	}
	if n, err := s.PruneSNMPEvents(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("prune: %d %v", n, err)
	}
	if _, err := sink.RecordEvent(ctx, snmp.Event{Device: "x"}); err == nil {
		t.Error("an event without key must be refused")
	}
}
