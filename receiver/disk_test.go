package receiver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/testlab"
)

// A data dir on a small tmpfs fills up while scans arrive: uploads that do
// not fit are refused to the client, everything the client was told is
// stored is kept, catalogued once space is back, and delivered; status
// says the disk is full meanwhile.
func TestFullDiskLosesNothing(t *testing.T) {
	requireSmbd(t)
	dir := filepath.Join(t.TempDir(), "tmpfs")
	os.Mkdir(dir, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=12m,mode=0755", "swrx-full", dir).CombinedOutput(); err != nil {
		testlab.Missing(t, fmt.Sprintf("cannot mount a tmpfs: %v %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	remote := &dirRemote{dir: t.TempDir()}
	remote.broken.Store(true)
	e := newEnv(t, opts{remote: remote, dir: dir})
	// leave ~1.5 MiB
	filler := filepath.Join(dir, "filler")
	var st receiver.Status
	st, _ = e.r.Status(context.Background())
	if st.FreeBytes < 2<<20 {
		t.Fatalf("only %d bytes free on the new tmpfs", st.FreeBytes)
	}
	if err := os.WriteFile(filler, make([]byte, st.FreeBytes-1536<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	refused := 0
	for i := 0; i < 12; i++ {
		data := pdf(strings.Repeat(string(rune('a'+i)), 200<<10))
		if err := e.put(fmt.Sprintf("reception/s%d.pdf", i), data, false); err != nil {
			refused++
			if !strings.Contains(err.Error(), "DISK_FULL") {
				t.Logf("refused: %v", err)
			}
			continue
		}
		stored[sum(data)] = true
	}
	if refused == 0 || len(stored) == 0 {
		t.Fatalf("stored %d, refused %d: the disk did not fill", len(stored), refused)
	}
	st, err := e.r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	full := false
	for _, w := range st.Warnings {
		full = full || strings.Contains(w, "nearly full")
	}
	if !full {
		t.Fatalf("status does not say the disk is full: %+v", st)
	}
	t.Logf("disk full: %d stored, %d refused; %d KiB free", len(stored), refused, st.FreeBytes>>10)
	os.Remove(filler)
	remote.broken.Store(false)
	rows := e.waitScans(20*time.Second, "every stored upload delivered", func(r []receiver.Scan) bool {
		return count(r, receiver.Delivered) >= len(stored)
	})
	got := map[string]int{}
	for _, r := range rows {
		if r.State == receiver.Delivered {
			got[r.SHA256]++
		}
	}
	for h := range stored {
		if got[h] != 1 {
			t.Errorf("stored upload %s… delivered %d times", h[:12], got[h])
		}
	}
	ents, _ := os.ReadDir(remote.dir)
	for _, en := range ents {
		b, _ := os.ReadFile(filepath.Join(remote.dir, en.Name()))
		if !stored[sum(b)] {
			t.Errorf("%s at the destination is no stored upload (cut?)", en.Name())
		}
	}
}
