package daemon

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/resolve"
)

// TestDeviceLearnerMatchesAddress: an observation on the fallback share is
// the device's whose address it is — an IP, or a name resolving to it —
// and nobody's when no device, or two devices, have that address; the
// schedule is told only when the client changed.
func TestDeviceLearnerMatchesAddress(t *testing.T) {
	dir := t.TempDir()
	st := testStore(t, config.Config{DataDir: filepath.Join(dir, "data")})
	defer st.Close()
	ctx := context.Background()
	for _, d := range []registry.Device{
		{Name: "byip", Address: "10.1.0.5"}, {Name: "byname", Address: "mfp-name.invalid:161"},
		{Name: "twin1", Address: "10.1.0.9"}, {Name: "twin2", Address: "10.1.0.9:1161"},
	} {
		if err := st.Devices().PutDevice(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	dns := &fakeDNS{zone: map[string][]netip.Addr{"mfp-name.invalid": {netip.MustParseAddr("10.1.0.6")}}}
	changes := 0
	p := &receiverPart{env: env{st: st, log: slog.New(slog.NewTextHandler(io.Discard, nil))}, names: resolve.NewCache(dns, time.Second)}
	l := deviceLearner{p, func() { changes++ }}
	at := time.Now()
	for _, ip := range []string{"10.1.0.5", "::ffff:10.1.0.6", "10.1.0.9", "10.1.0.7", "not an address"} {
		l.Observe(ctx, samba.Observation{Address: ip, At: at, Dialect: "SMB2_10"})
	}
	l.Observe(ctx, samba.Observation{Address: "10.1.0.5", At: at.Add(time.Second), Dialect: "SMB2_10"}) // no change
	for name, want := range map[string]string{"byip": "2.1", "byname": "2.1", "twin1": "", "twin2": ""} {
		d, err := st.Devices().Device(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Profile.Seen[registry.FieldMaxDialect].Value; got != want {
			t.Errorf("%s learned max dialect %q, want %q", name, got, want)
		}
	}
	if changes != 2 {
		t.Errorf("the schedule was told %d times, want 2 (byip, byname)", changes)
	}
}
