package receiver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/internal/attacker"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

// TestAttackerChild is the daemon's user's swapping process (attacker.Swap);
// a no-op as a test.
func TestAttackerChild(t *testing.T) { attacker.Child() }

// TestAttackForceWritesWhereDaemonSays: `receiver force ID` runs as root on
// the installed data dir, which the daemon's user owns; it checked where a
// scan is taken from, not where it is put. (a) The daemon made
// held/<today> a symbolic link to a root-only folder and planted an
// incomplete row for a file of its own: force moved that file into root's
// folder (MkdirAll and the rename followed the link). (b) A second row,
// the same bytes, state held, held_path ../../x/evil.sh: force "reused the
// committed row" and renamed the daemon's file to that path — a file the
// daemon wrote in /etc/profile.d runs as root at the next login. Now the
// date folder is made with mkdirat below held/'s fd, the move is made
// between folder fds, a held path is taken only below held/, and such a
// force is refused naming why.
func TestAttackForceWritesWhereDaemonSays(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	data := filepath.Join(base, "var", "data")
	rootOnly := filepath.Join(base, "rootonly") // stands for /etc/profile.d
	os.Mkdir(rootOnly, 0o700)
	os.MkdirAll(data, 0o700)
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	body := pdf("the daemon's own file")
	plant := func(name string) string {
		rel := filepath.Join("inbox", "front", name)
		os.MkdirAll(filepath.Join(data, "inbox", "front"), 0o750)
		if err := os.WriteFile(filepath.Join(data, rel), body, 0o644); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	today := time.Now().UTC().Format("2006-01-02")
	os.MkdirAll(filepath.Join(data, "held"), 0o700)
	attacker.Own(t, data)
	attacker.Symlink(t, rootOnly, filepath.Join(data, "held", today))

	// (a) the date folder a link to root's folder
	rel := plant("a.pdf")
	attacker.Own(t, data)
	id, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "front", Folder: "front", File: "a.pdf", Size: int64(len(body)),
		SHA256: sum(body), State: receiver.Incomplete, ReceivedAt: time.Now(), InboxPath: rel})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receiver.Force(ctx, data, st.Scans(), id); err == nil {
		t.Error("held/<today> a link: forced")
	} else if !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("held/<today> a link: %v, want it named", err)
	}
	if ents, _ := os.ReadDir(rootOnly); len(ents) > 0 {
		t.Errorf("force moved the daemon's file into root's folder: %s", ents[0].Name())
	}

	// (b) a committed row naming a path out of held/
	os.Remove(filepath.Join(data, "held", today))
	rel = plant("b.pdf")
	attacker.Own(t, data)
	os.MkdirAll(filepath.Join(base, "x"), 0o755)
	if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "front", Folder: "front", File: "b.pdf", Size: int64(len(body)),
		SHA256: sum(body), State: receiver.Held, ReceivedAt: time.Now(), InboxPath: rel, HeldPath: "../../x/evil.sh"}); err != nil {
		t.Fatal(err)
	}
	id, err = st.Scans().AddScan(ctx, receiver.Scan{Destination: "front", Folder: "front", File: "b.pdf", Size: int64(len(body)),
		SHA256: sum(body), State: receiver.Incomplete, ReceivedAt: time.Now(), InboxPath: rel})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receiver.Force(ctx, data, st.Scans(), id); err == nil {
		t.Error("a committed row naming ../../x/evil.sh: forced")
	} else if !strings.Contains(err.Error(), "held/") {
		t.Errorf("a committed row naming ../../x/evil.sh: %v, want it named", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "x", "evil.sh")); err == nil {
		t.Error("force renamed the daemon's file out of the data dir (x/evil.sh)")
	}
	if _, err := os.Stat(filepath.Join(data, rel)); err != nil {
		t.Errorf("the refused scan left the inbox: %v", err)
	}
}
