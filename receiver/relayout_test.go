package receiver_test

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

// registryDests is a registry that grows while the receiver runs.
type registryDests struct {
	mu sync.Mutex
	d  []receiver.Destination
}

func (g *registryDests) Destinations(context.Context) ([]receiver.Destination, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.d), nil
}

func (g *registryDests) add(d receiver.Destination) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.d = append(g.d, d)
}

// A destination added while the receiver runs gets its folder on the share
// when Relayout asks (serve: a web import, `systemctl reload`), not only at
// the next rescan — here an hour away, so only Relayout can make it.
func TestRelayoutMakesANewDestinationsFolderNow(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := receiver.Config{DataDir: filepath.Join(dir, "receiver"), SmbdDir: filepath.Join(dir, "smbd"), Listen: netip.MustParseAddr("127.0.0.1"),
		Port: freePort(t), Share: "scans", Accounts: []samba.Account{{Name: "swmfp", Password: scanwardenSecret(mfpPassword)}},
		Allow:         []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		ExternalSamba: true,
		Watch:         receiver.WatchConfig{Quiet: 2 * time.Second, QuietAfterLogoff: 100 * time.Millisecond, Rescan: time.Hour},
		Forward:       receiver.DefaultForward}
	dests := &registryDests{d: []receiver.Destination{{Name: "front", Folder: "front"}}}
	r, err := receiver.New(cfg, st.Scans(), dests, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	inbox := receiver.Inbox(cfg.DataDir)
	if _, err := os.Stat(filepath.Join(inbox, "front")); err != nil {
		t.Fatalf("the registered destination's folder after Open: %v", err)
	}
	dests.add(receiver.Destination{Name: "back office", Folder: "back-office"})
	r.Relayout()
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(filepath.Join(inbox, "back-office"))
		if err == nil && fi.IsDir() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the folder of a destination added while running is not made 10 s after Relayout (rescan in an hour): %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
