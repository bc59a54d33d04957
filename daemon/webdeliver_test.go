package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// localRemote is a local folder standing in for the destination's share (a
// fake: what is tested here is which scan the adapter delivers).
type localRemote string

func (d localRemote) Open(context.Context, scanwarden.Target) (receiver.Folder, error) {
	return localFolder(d), nil
}

type localFolder string

func (d localFolder) p(n string) string { return filepath.Join(string(d), n) }
func (d localFolder) Open(_ context.Context, n string) (receiver.RemoteFile, error) {
	return os.Open(d.p(n))
}
func (d localFolder) Create(_ context.Context, n string) (receiver.RemoteFile, error) {
	return os.OpenFile(d.p(n), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}
func (d localFolder) Rename(_ context.Context, a, b string) error {
	if _, err := os.Stat(d.p(b)); err == nil {
		return os.ErrExist
	}
	return os.Rename(d.p(a), d.p(b))
}
func (d localFolder) Stat(_ context.Context, n string) (fs.FileInfo, error) { return os.Stat(d.p(n)) }
func (d localFolder) Remove(_ context.Context, n string) error              { return os.Remove(d.p(n)) }
func (d localFolder) Close() error                                          { return nil }

// The web's per-scan "Deliver now" (receiverBackend.Deliver) delivers that
// scan only, not the other scan held for the same destination.
func TestWebDeliverOneScan(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/smbd"); err != nil {
		testlab.Missing(t, "receiver.New needs samba installed")
	}
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, filepath.Join(dir, "secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := st.Destinations().PutDestination(ctx, registry.Destination{Name: "reception", Host: "127.0.0.1", Share: "scans"}); err != nil {
		t.Fatal(err)
	}
	rdir, dest := filepath.Join(dir, "receiver"), t.TempDir()
	os.MkdirAll(filepath.Join(rdir, "held"), 0o755)
	ids := map[string]int64{}
	for _, name := range []string{"a.pdf", "b.pdf"} {
		body := []byte("%PDF-1.4 " + name)
		os.WriteFile(filepath.Join(rdir, "held", name), body, 0o644)
		sum := sha256.Sum256(body)
		id, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "reception", Folder: "reception", File: name, Size: int64(len(body)),
			SHA256: hex.EncodeToString(sum[:]), State: receiver.Held, ReceivedAt: time.Now(), HeldPath: "held/" + name})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	r, err := receiver.New(receiver.Config{DataDir: rdir, Listen: netip.MustParseAddr("127.0.0.1"), Port: 4450, Share: "scans",
		Accounts: []samba.Account{{Name: "mfp", Password: scanwarden.NewSecret("pw-0123456789")}},
		Watch:    receiver.DefaultWatch, Forward: receiver.DefaultForward}, st.Scans(), st.Destinations().Deliveries(), localRemote(dest), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := receiverBackend{webReceiver{st, rdir}, r}
	if err := b.Deliver(ctx, ids["b.pdf"]); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dest)
	if len(ents) != 1 || ents[0].Name() != "b.pdf" {
		t.Fatalf("destination holds %v, want only b.pdf", ents)
	}
	for name, want := range map[string]receiver.State{"a.pdf": receiver.Held, "b.pdf": receiver.Delivered} {
		s, err := st.Scans().Scan(ctx, ids[name])
		if err != nil || s.State != want {
			t.Errorf("%s: %s %v, want %s", name, s.State, err, want)
		}
	}
}
