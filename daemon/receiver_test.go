package daemon

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

// The receiver's delivery outcomes reach the monitor: a claimed scan that
// becomes delivered or failed is reported once; other transitions are not.
func TestObservedCatalogue(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type seen struct {
		file string
		ok   bool
	}
	var got []seen
	c := observedCatalogue{st.Scans(), func(s receiver.Scan, ok bool) { got = append(got, seen{s.File, ok}) }}
	now := time.Now()
	add := func(file string) receiver.Scan {
		s := receiver.Scan{Destination: "reception", Folder: "reception", File: file, Size: 3, SHA256: "x", State: receiver.Held, ReceivedAt: now, HeldPath: "held/" + file}
		id, err := c.AddScan(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		s.ID = id
		return s
	}
	a, b := add("a.pdf"), add("b.pdf")
	for _, s := range []*receiver.Scan{&a, &b} {
		s.State, s.Claim = receiver.Delivering, "me"
		if ok, err := c.UpdateScan(ctx, *s, receiver.Held); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	a.State = receiver.Delivered
	c.UpdateScan(ctx, a, receiver.Delivering)
	b.State, b.Error = receiver.Failed, "access denied"
	c.UpdateScan(ctx, b, receiver.Delivering)
	c.UpdateScan(ctx, b, receiver.Delivering) // no longer delivering: not written, not reported
	if len(got) != 2 || got[0] != (seen{"a.pdf", true}) || got[1] != (seen{"b.pdf", false}) {
		t.Fatalf("reported %+v", got)
	}
	// refused as it arrived: reported as a failed delivery at once
	r := receiver.Scan{Destination: "reception", Folder: "reception", File: "x.exe", Size: 3, SHA256: "y", State: receiver.Refused,
		ReceivedAt: now, HeldPath: "held/x.exe", Error: receiver.RefusedPrefix + "its content is a Windows program (MZ header)"}
	if _, err := c.AddScan(ctx, r); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2] != (seen{"x.exe", false}) {
		t.Fatalf("refused scan reported as %+v", got)
	}
}
