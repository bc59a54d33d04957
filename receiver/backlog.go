package receiver

import (
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// Backlog is one destination's deliveries summed up, as its bridge's
// health reads them (the store's Scans.Backlog, without reading every row).
type Backlog struct {
	// Waiting counts its scans not yet delivered (held, failed,
	// delivering); Oldest is when the oldest of them was received (zero:
	// none waits).
	Waiting int
	Oldest  time.Time
	// LastDelivered is when its newest delivered scan was delivered, and
	// under which name (zero: none yet).
	LastDelivered time.Time
	LastFile      string
	// LastFailed is its newest failed scan (nil: none waits failed): its
	// error is the last delivery's outcome when the newest attempt failed.
	LastFailed *Scan
}

// LastShareCheck is the probe of its share the receiver running on
// dataDir last recorded (receiver.json; nil: none ran there) — for a
// command beside a running serve. Its At tells how old it is.
func LastShareCheck(dataDir string) *samba.ShareHealth {
	info, ok := readRunInfo(dataDir)
	if !ok {
		return nil
	}
	return info.ShareCheck
}
