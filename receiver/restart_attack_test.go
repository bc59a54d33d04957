package receiver_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cloudsoda/go-smb2"
)

// TestAttackInstalledOpenAcrossRestart: in the installed layout (root smbd,
// the watcher as the daemon's user), files still open for writing when the
// daemon restarts — one held by one handle, one by the second of two
// handles after the first closed, one in a folder the MFP made mid-scan —
// are not taken by the new watcher, which finds them by its walk with an
// old mtime and no events; each is taken whole once closed.
func TestAttackInstalledOpenAcrossRestart(t *testing.T) {
	in := startInstalled(t)
	body := scanBodies(t)["slow.pdf"]
	half := len(body) / 2
	s, sh := in.session(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	one, err := sh.Create(`front\one.pdf`)
	must(err)
	_, err = one.Write(body[:half])
	must(err)
	first, err := sh.Create(`front\two.pdf`)
	must(err)
	_, err = first.Write(body[:half])
	must(err)
	second, err := sh.OpenFile(`front\two.pdf`, os.O_RDWR, 0)
	must(err)
	must(first.Close())
	must(sh.Mkdir(`front\made`, 0o755))
	deep, err := sh.Create(`front\made\three.pdf`)
	must(err)
	_, err = deep.Write(body[:half])
	must(err)
	written := time.Now()

	in.stop()
	in.startChild()
	// the new watcher's quiet window (10 s) counts from the files' mtime:
	// past it, only the kernel's "still open" keeps them
	for time.Since(written) < receiverQuiet()+3*time.Second {
		if got := in.taken(); len(got) > 0 {
			t.Fatalf("taken after the restart while still open, %v after the last write: %v", time.Since(written).Round(time.Second), got)
		}
		time.Sleep(250 * time.Millisecond)
	}
	for _, f := range []*smb2.File{one, second, deep} {
		_, err := f.WriteAt(body[half:], int64(half))
		must(err)
		must(f.Close())
	}
	sh.Umount()
	s.Logoff()
	want := []string{"one.pdf", "two.pdf", "made_three.pdf"}
	if !in.until(30*time.Second, func() bool { return len(in.taken()) == len(want) }) {
		t.Fatalf("after the close, taken: %v", in.taken())
	}
	for _, name := range want {
		m, ok := in.taken()[name]
		if !ok || m["msg"] != "scan held" || fmt.Sprint(m["size"]) != fmt.Sprint(len(body)) {
			t.Errorf("%s: %v (want held, %d bytes)", name, m, len(body))
		}
	}
}

func receiverQuiet() time.Duration { return 10 * time.Second }
