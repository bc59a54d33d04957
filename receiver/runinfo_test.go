package receiver

import (
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// TestRunInfoConcurrentWriters: receiver.json is written by the share
// probe's loop, the watcher's ingest-stop signal and SetAllow, each on its
// own goroutine. A reader (`receiver status`, doctor, the web page's
// ReadIngestStopped) must always find the file whole, and after the
// writers are done it must hold the last state — an ingest stop is never
// overwritten by an older snapshot.
func TestRunInfoConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	f := &runFile{cfg: Config{DataDir: dir, Listen: netip.MustParseAddr("127.0.0.1"), Port: 445, Share: "scans"}, samba: &samba.Server{}}
	f.write()
	var stop atomic.Bool
	var torn atomic.Int64
	var rd sync.WaitGroup
	rd.Add(1)
	go func() {
		defer rd.Done()
		for !stop.Load() {
			if _, ok := readRunInfo(dir); !ok {
				torn.Add(1)
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				f.setStopped(fmt.Sprintf("writer %d step %d", w, i))
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	rd.Wait()
	f.setStopped("the disk is full")
	if n := torn.Load(); n > 0 {
		t.Errorf("a reader found receiver.json torn or missing %d times while it was rewritten", n)
	}
	if why, ok := ReadIngestStopped(dir); !ok || why != "the disk is full" {
		t.Errorf("receiver.json after the writers: ingest stopped %q (ok %v), want the last state", why, ok)
	}
}
