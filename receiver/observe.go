package receiver

import (
	"context"
	"net/netip"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbconn"
)

// Observer learns what each MFP's own SMB client does from its logons and
// files on the fallback share (the daemon matches the address to a
// device and stores it in its profile). Observe is called from one
// goroutine of the receiver's, never from the watcher's loop.
type Observer interface {
	Observe(ctx context.Context, o samba.Observation)
}

// fileObservation is what a scan taken from the inbox shows: the type its
// writer scans to. writer is the audit log's user|ip|machine|protocol;
// file the scan's name, whose extension Sniff found to agree with its
// bytes.
func fileObservation(writer, file string, now time.Time) (samba.Observation, bool) {
	f := strings.Split(writer, "|")
	if len(f) < 2 {
		return samba.Observation{}, false
	}
	a, err := netip.ParseAddr(f[1])
	if err != nil || a.Zone() != "" {
		return samba.Observation{}, false
	}
	ext := strings.ToLower(path.Ext(file))
	var t smbconn.FileType
	switch extKinds[ext] {
	case KindPDF:
		t = smbconn.FileTypePDF
	case KindTIFF:
		t = smbconn.FileTypeTIFF
	case KindJPEG:
		t = smbconn.FileTypeJPEG
	case KindXPS:
		t = smbconn.FileTypeXPS
		if ext == ".oxps" {
			t = smbconn.FileTypeOXPS
		}
	default:
		return samba.Observation{}, false // not a type the profile knows (PNG, Office, text)
	}
	return samba.Observation{Address: a.Unmap().String(), At: now, FileType: string(t)}, true
}

// observations hands what the log and the inbox show to the Observer on
// a goroutine of its own, through a bounded queue: a flood of logons
// drops observations (counted), never stalls the watcher.
type observations struct {
	ch      chan samba.Observation
	mu      sync.Mutex
	dropped int
}

const observationQueue = 256

func newObservations() *observations {
	return &observations{ch: make(chan samba.Observation, observationQueue)}
}

// put queues o; a full queue drops it.
func (q *observations) put(o samba.Observation) {
	if q == nil {
		return
	}
	select {
	case q.ch <- o:
	default:
		q.mu.Lock()
		q.dropped++
		q.mu.Unlock()
	}
}

// run hands each observation to obs until ctx ends.
func (q *observations) run(ctx context.Context, obs Observer) {
	for {
		select {
		case <-ctx.Done():
			return
		case o := <-q.ch:
			obs.Observe(ctx, o)
		}
	}
}
