package receiver

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// folders lays the share out: one folder per registered destination plus
// _unsorted, made again at each rescan and at once when asked (Relayout),
// and tells which destination a scan's folder is for.
type folders struct {
	inbox string
	dests Destinations // nil: _unsorted alone
	log   *slog.Logger
	every time.Duration // the rescan
	relay chan struct{} // a request for the folders now

	mu   sync.Mutex
	dest map[string]string // share folder → destination
}

func newFolders(inbox string, dests Destinations, every time.Duration, log *slog.Logger) *folders {
	return &folders{inbox: inbox, dests: dests, log: log, every: every, relay: make(chan struct{}, 1), dest: map[string]string{}}
}

// destOf is the destination whose folder is folder ("" = none).
func (f *folders) destOf(folder string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dest[folder]
}

// layout makes one folder per registered destination plus _unsorted.
func (f *folders) layout(ctx context.Context) error {
	var dests []Destination
	if f.dests != nil {
		var err error
		if dests, err = f.dests.Destinations(ctx); err != nil {
			return fmt.Errorf("receiver: destinations: %w", err)
		}
	}
	byFolder := map[string]string{}
	for _, d := range append(dests, Destination{Folder: Unsorted}) {
		if d.Folder == "" || d.Folder != filepath.Base(d.Folder) || d.Folder == "." || d.Folder == ".." {
			f.log.Warn("destination has no usable folder name; its scans go to _unsorted", "destination", d.Name)
			continue
		}
		if err := os.MkdirAll(filepath.Join(f.inbox, d.Folder), 0o750); err != nil {
			return fmt.Errorf("receiver: folder %s: %w", d.Folder, err)
		}
		if d.Name != "" {
			byFolder[d.Folder] = d.Name
		}
	}
	f.mu.Lock()
	f.dest = byFolder
	f.mu.Unlock()
	return nil
}

// ask asks for the folders now instead of at the next rescan; it does not
// wait for them.
func (f *folders) ask() {
	select {
	case f.relay <- struct{}{}:
	default: // one is asked for already
	}
}

// loop lays the share out again at each rescan (destinations are re-read)
// and when asked, until ctx ends.
func (f *folders) loop(ctx context.Context) {
	refresh := time.NewTicker(max(f.every, time.Second))
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.relay:
		case <-refresh.C:
		}
		if err := f.layout(ctx); err != nil {
			f.log.Warn("share layout", "err", err)
		}
	}
}
