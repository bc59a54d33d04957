package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestSetBridged: a destination is bridged and unbridged; an edit or a
// re-import (PutDestination) keeps the bridge; a bridged destination
// resolves to scanwarden's own client, not its device's.
func TestSetBridged(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	if err := s.Devices().PutDevice(ctx, registry.Device{Name: "mfp21", Address: "10.77.0.2"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Devices().SetDeviceProfile(ctx, "mfp21", map[registry.ProfileField]string{registry.FieldEncryption: "no", registry.FieldMaxDialect: "2.1"}, nil); err != nil {
		t.Fatal(err)
	}
	d := registry.Destination{Name: "sealed", Host: "10.77.0.22", Share: "sealed", User: "scanuser", Password: scanwarden.NewSecret("pw-Secret-9"), Device: "mfp21"}
	if err := s.Destinations().PutDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	r, err := s.Destinations().Target(ctx, "sealed")
	if err != nil || r.Bridged() || !r.Client.NoEncryption {
		t.Fatalf("before: bridged %v, client %+v, %v", r.Bridged(), r.Client, err)
	}
	if _, err := s.Destinations().SetBridged(ctx, "nope", true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown destination: %v", err)
	}
	if changed, err := s.Destinations().SetBridged(ctx, "sealed", true); err != nil || !changed {
		t.Fatalf("bridge: %v %v", changed, err)
	}
	if changed, err := s.Destinations().SetBridged(ctx, "sealed", true); err != nil || changed {
		t.Fatalf("bridge again: %v %v", changed, err)
	}
	d.Path = "inbox" // an edit
	if err := s.Destinations().PutDestination(ctx, d); err != nil {
		t.Fatal(err)
	}
	r, err = s.Destinations().Target(ctx, "sealed")
	if err != nil || !r.Bridged() || time.Since(r.BridgedAt) > time.Minute || r.Client.Known() || r.Path != "inbox" {
		t.Fatalf("after an edit: bridged %v at %v, client %+v, path %q, %v", r.Bridged(), r.BridgedAt, r.Client, r.Path, err)
	}
	if changed, err := s.Destinations().SetBridged(ctx, "sealed", false); err != nil || !changed {
		t.Fatalf("unbridge: %v %v", changed, err)
	}
	if r, _ = s.Destinations().Target(ctx, "sealed"); r.Bridged() || !r.Client.NoEncryption || r.Client.MaxDialect != smbcheck.DialectSMB21 {
		t.Fatalf("unbridged: %v %+v", r.Bridged(), r.Client)
	}
}

// TestBacklog sums one destination's deliveries: what waits and since
// when, the newest delivery, the newest failure; other destinations'
// scans are not counted.
func TestBacklog(t *testing.T) {
	ctx := context.Background()
	s := openUnlocked(t, t.TempDir())
	c := s.Scans()
	b, err := c.Backlog(ctx, "sealed")
	if err != nil || b.Waiting != 0 || !b.Oldest.IsZero() || !b.LastDelivered.IsZero() || b.LastFailed != nil {
		t.Fatalf("empty: %+v %v", b, err)
	}
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	add := func(dest string, st receiver.State, received time.Time, delivered time.Time, name, e string) {
		t.Helper()
		if _, err := c.AddScan(ctx, receiver.Scan{Destination: dest, Folder: dest, File: "x.pdf", Size: 1, SHA256: "00", State: st,
			ReceivedAt: received, DeliveredAt: delivered, RemoteName: name, Error: e}); err != nil {
			t.Fatal(err)
		}
	}
	add("sealed", receiver.Delivered, t0, t0.Add(time.Minute), "a.pdf", "")
	add("sealed", receiver.Purged, t0.Add(-time.Hour), t0.Add(-50*time.Minute), "old.pdf", "")
	add("sealed", receiver.Failed, t0.Add(2*time.Minute), time.Time{}, "", "first failure")
	add("sealed", receiver.Failed, t0.Add(3*time.Minute), time.Time{}, "", "newest failure")
	add("sealed", receiver.Held, t0.Add(4*time.Minute), time.Time{}, "", "")
	add("other", receiver.Held, t0.Add(-3*time.Hour), time.Time{}, "", "")
	add("other", receiver.Delivered, t0, t0.Add(time.Hour), "o.pdf", "")
	b, err = c.Backlog(ctx, "sealed")
	if err != nil {
		t.Fatal(err)
	}
	if b.Waiting != 3 || !b.Oldest.Equal(t0.Add(2*time.Minute)) || !b.LastDelivered.Equal(t0.Add(time.Minute)) || b.LastFile != "a.pdf" ||
		b.LastFailed == nil || b.LastFailed.Error != "newest failure" {
		t.Fatalf("backlog %+v", b)
	}
}
