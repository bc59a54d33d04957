package receiver_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

// TestAttackDeliverHeldPathOutside: a scan's held path comes from the
// database, which the daemon's user writes, and `receiver deliver` may run
// as root on the installed data dir. A row naming a path out of the data
// dir ("../…"), or a held file or folder the daemon made a symbolic link,
// had root read a file of its own and send it to the destination (one the
// daemon chooses too). Now a held copy is opened only below the data dir's
// held/, no component followed as a link; such a scan fails naming why.
func TestAttackDeliverHeldPathOutside(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	secretDir := filepath.Join(base, "root")
	os.MkdirAll(secretDir, 0o700)
	secret := []byte("root's own secret, plain text\n")
	os.WriteFile(filepath.Join(secretDir, "secret.txt"), secret, 0o600)
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	os.MkdirAll(filepath.Join(dir, "held"), 0o700)
	os.Symlink(filepath.Join(secretDir, "secret.txt"), filepath.Join(dir, "held", "link.txt"))
	os.Symlink(secretDir, filepath.Join(dir, "held", "day"))
	rel, _ := filepath.Rel(dir, filepath.Join(secretDir, "secret.txt"))
	for i, held := range []string{rel, "held/link.txt", "held/day/secret.txt", filepath.Join(secretDir, "secret.txt")} {
		if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "d", Folder: "d", File: "note" + string(rune('a'+i)) + ".txt",
			Size: int64(len(secret)), SHA256: sum(secret), State: receiver.Held, ReceivedAt: time.Now(), HeldPath: held}); err != nil {
			t.Fatal(err)
		}
	}
	remote := &dirRemote{dir: t.TempDir()}
	receiver.DeliverNow(ctx, dir, st.Scans(), dDest, remote, "")
	ents, _ := os.ReadDir(remote.dir)
	for _, e := range ents {
		if b, _ := os.ReadFile(filepath.Join(remote.dir, e.Name())); bytes.Equal(b, secret) {
			t.Errorf("a file outside the held area was delivered as %s", e.Name())
		}
	}
	rows, _ := st.Scans().Scans(ctx, receiver.ScanQuery{})
	for _, r := range rows {
		if r.State == receiver.Delivered {
			t.Errorf("scan %d (held path %s) delivered", r.ID, r.HeldPath)
		}
	}
}

// TestAttackForceInboxPathOutside: `receiver force ID` (root on the
// installed data dir too) took the scan's inbox path from the database: a
// row the daemon's user wrote naming ../… or a folder of the inbox it made
// a symbolic link had root move a file of its own into the held area (out
// of its place, and then delivered by root's `receiver deliver`). Now the
// path must lie below inbox/, no folder on it a link.
func TestAttackForceInboxPathOutside(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	secretDir := filepath.Join(base, "root")
	os.MkdirAll(secretDir, 0o700)
	secretFile := filepath.Join(secretDir, "secret.txt")
	secret := []byte("root's own secret, plain text\n")
	os.WriteFile(secretFile, secret, 0o600)
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	os.MkdirAll(filepath.Join(dir, "inbox"), 0o750)
	os.Symlink(secretDir, filepath.Join(dir, "inbox", "day"))
	rel, _ := filepath.Rel(dir, secretFile)
	for _, inboxPath := range []string{rel, "inbox/day/secret.txt"} {
		id, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "d", Folder: "d", File: "secret.txt",
			Size: int64(len(secret)), SHA256: sum(secret), State: receiver.Incomplete, ReceivedAt: time.Now(), InboxPath: inboxPath})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := receiver.Force(ctx, dir, st.Scans(), id); err == nil {
			t.Errorf("inbox path %s: forced", inboxPath)
		}
		if b, err := os.ReadFile(secretFile); err != nil || !bytes.Equal(b, secret) {
			t.Fatalf("inbox path %s: the file of root's left its place: %v", inboxPath, err)
		}
	}
}
