package daemon

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

// The web's events: a registered device's own are named after it; an
// unverified one (sender not proven to be the device) keeps the sender's
// address even when it is a registered device's, and is marked.
func TestWebEventsUnverified(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Devices().PutDevice(ctx, registry.Device{Name: "MFP-LAB", Address: "10.77.0.40"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour)
	sink := st.Events().SNMP(30 * time.Minute)
	if _, err := sink.RecordEvents(ctx, []snmp.Event{
		{Device: "10.77.0.40:161", Time: t0, Code: "1102", Source: snmp.SourceJob, Key: "job:1"},
		{Device: "10.77.0.40:161", Time: t0.Add(time.Minute), Code: "1102", Text: "<script>x</script>", Source: snmp.SourceMail, Key: "mail:1", Unverified: true},
	}); err != nil {
		t.Fatal(err)
	}
	b := webBackend{m: &Main{env: env{st: st}}}
	all, err := b.Events(ctx, web.EventQuery{Limit: 10})
	if err != nil || len(all) != 2 {
		t.Fatalf("all: %+v %v", all, err)
	}
	if !all[0].Unverified || all[0].Device != "10.77.0.40:161" || all[0].Text != "<script>x</script>" {
		t.Errorf("unverified: %+v", all[0])
	}
	if all[1].Unverified || all[1].Device != "MFP-LAB" {
		t.Errorf("verified: %+v", all[1])
	}
	for which, want := range map[web.Which]bool{web.EventsUnverified: true, web.EventsVerified: false} {
		got, err := b.Events(ctx, web.EventQuery{Which: which, Limit: 10})
		if err != nil || len(got) != 1 || got[0].Unverified != want {
			t.Errorf("which %d: %+v %v", which, got, err)
		}
	}
}
