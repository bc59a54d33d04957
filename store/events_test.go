package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
	// Sightings in 2025: no age limit here (TestSNMPEventLimits has them).
	sink := s.Events().SNMPLimited(30*time.Minute, SNMPLimits{MaxAge: 100 * 365 * 24 * time.Hour, MaxRows: 1000, MaxBytes: 1 << 20})
	hostile := "<script>alert(1)</script>'; DROP TABLE snmp_events; --"
	inv := snmp.Inventory{Address: "10.77.0.40:161", Kyocera: true, Model: "TASKalfa 3253ci", Serial: "W4X0A20002", SysName: hostile, SeenAt: time.Unix(1000, 0)}
	if err := sink.RecordDevice(ctx, inv); err != nil {
		t.Fatal(err)
	}
	inv.Firmware = "2TN_S0IS.C01.003"
	if err := sink.RecordDevice(ctx, inv); err != nil {
		t.Fatal(err)
	}
	devs, err := s.Events().SNMPDevices(ctx)
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
	evs, err := s.Events().SNMPEvents(ctx, inv.Address, time.Time{}, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %+v %v", evs, err)
	}
	if evs[1].Count != 3 || !evs[1].LastSeen.Equal(t0.Add(35*time.Minute)) || evs[1].Text != hostile || evs[1].Detail["oid"] == "" {
		t.Errorf("first occurrence: %+v", evs[1])
	}
	if n, err := s.Events().PruneSNMPEvents(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("prune: %d %v", n, err)
	}
	if _, err := sink.RecordEvent(ctx, snmp.Event{Device: "x"}); err == nil {
		t.Error("an event without key must be refused")
	}
}

// A flood of distinct events (2,000 forged mails once made 20,005 rows and
// 84 MB) stays within the table's limits: rows beyond MaxRows and bytes
// beyond MaxBytes go, oldest first, and every drop is counted by reason.
func TestSNMPEventLimits(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	flood := func(sink *SNMPSink, n int, text string) {
		t.Helper()
		var batch []snmp.Event
		for i := range n {
			batch = append(batch, snmp.Event{Device: "10.0.0.1:161", Time: now, Code: "1102", Text: text,
				Source: snmp.SourceMail, Key: fmt.Sprintf("mail:%s:%d", text[:1], i)})
			if len(batch) == 250 || i == n-1 {
				if _, err := sink.RecordEvents(ctx, batch); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
	}
	count := func() (rows, bytes int64) {
		t.Helper()
		if err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(`+eventBytes+`), 0) FROM snmp_events`).Scan(&rows, &bytes); err != nil {
			t.Fatal(err)
		}
		return rows, bytes
	}

	rowsCapped := s.Events().SNMPLimited(time.Minute, SNMPLimits{MaxAge: time.Hour, MaxRows: 1000, MaxBytes: 1 << 30})
	flood(rowsCapped, 5000, "a")
	if rows, _ := count(); rows > 1000+pruneEvery {
		t.Errorf("%d rows with MaxRows 1000", rows)
	}
	drops, err := s.Events().SNMPEventDrops(ctx)
	if err != nil || drops["rows"] < 3500 {
		t.Errorf("drops %v %v", drops, err)
	}
	if d := rowsCapped.Dropped(); d["rows"] != drops["rows"] {
		t.Errorf("sink counted %v, store %v", d, drops)
	}

	big := strings.Repeat("b", 4000)
	bytesCapped := s.Events().SNMPLimited(time.Minute, SNMPLimits{MaxAge: time.Hour, MaxRows: 1 << 40, MaxBytes: 1 << 20})
	flood(bytesCapped, 2000, big)
	if _, bytes := count(); bytes > 1<<20+pruneEvery*4200 {
		t.Errorf("%d bytes with MaxBytes 1 MiB", bytes)
	}
	if drops, _ := s.Events().SNMPEventDrops(ctx); drops["bytes"] == 0 {
		t.Errorf("no drop counted for bytes: %v", drops)
	}

	// An hour later everything is past MaxAge.
	now = now.Add(2 * time.Hour)
	flood(bytesCapped, 1, "c")
	if rows, _ := count(); rows != 1 {
		t.Errorf("%d rows after the age limit", rows)
	}
	if drops, _ := s.Events().SNMPEventDrops(ctx); drops["age"] == 0 {
		t.Errorf("no drop counted for age: %v", drops)
	}
}

// BenchmarkRecordEventsBatch: distinct trap events stored 256 to a
// transaction, as the trap listener's writer does.
func BenchmarkRecordEventsBatch(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "sw.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sink := s.Events().SNMP(0)
	batch := make([]snmp.Event, 256)
	b.ResetTimer()
	for i := 0; i < b.N; i += len(batch) {
		for j := range batch {
			batch[j] = snmp.Event{Device: "127.0.0.1:161", Time: time.Now(), Code: "1102", Source: snmp.SourceTrap,
				Text: `Send error 1102 \\fs01\scans\alice`, Key: fmt.Sprintf("trap:%d", i+j),
				Detail: map[string]string{"trap_oid": "1.3.6.1.2.1.43.18.2.0.1", "vars": "1.3.6.1.2.1.43.18.1.1.8.1.1=Send error 1102"}}
		}
		if _, err := sink.RecordEvents(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// ListSNMPEvents selects by whether the sender was proven to be the device.
func TestListSNMPEventsUnverified(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sink := s.Events().SNMPLimited(30*time.Minute, SNMPLimits{MaxAge: 100 * 365 * 24 * time.Hour, MaxRows: 1000, MaxBytes: 1 << 20})
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	evs := []snmp.Event{
		{Device: "10.77.0.40:161", Time: t0, Code: "1102", Source: snmp.SourceJob, Key: "job:1"},
		{Device: "10.77.0.99", Time: t0.Add(time.Minute), Code: "1102", Text: "<b>forged</b>", Source: snmp.SourceMail, Key: "mail:1", Unverified: true},
		{Device: "10.77.0.40:161", Time: t0.Add(2 * time.Minute), Code: "1101", Source: snmp.SourceJob, Key: "job:2"},
	}
	if _, err := sink.RecordEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		unv   *bool
		codes string
	}{
		{"both", nil, "1101,1102,1102"},
		{"unverified only", new(true), "1102"},
		{"verified only", new(false), "1101,1102"},
	} {
		got, err := s.Events().ListSNMPEvents(ctx, SNMPEventFilter{Unverified: tc.unv})
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		for _, e := range got {
			codes = append(codes, e.Code)
			if tc.unv != nil && e.Unverified != *tc.unv {
				t.Errorf("%s: %+v", tc.name, e)
			}
		}
		if strings.Join(codes, ",") != tc.codes {
			t.Errorf("%s: codes %v, want %s", tc.name, codes, tc.codes)
		}
	}
	got, err := s.Events().ListSNMPEvents(ctx, SNMPEventFilter{Device: "10.77.0.40:161", Unverified: new(true)})
	if err != nil || len(got) != 0 {
		t.Fatalf("device + unverified: %+v %v", got, err)
	}
}
