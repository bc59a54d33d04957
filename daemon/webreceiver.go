package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

var _ web.Receiver = webReceiver{}

// webReceiver reads the scan catalogue. Delivering and forcing need the
// running receiver; until the daemon runs it they say so.
type webReceiver struct {
	st  *store.Store
	dir string // the receiver's data dir: catalogue paths are relative to it
}

// webScan is a catalogue row as the web shows it (the running receiver's
// backend and webReceiver, when none runs, both).
func webScan(s receiver.Scan) web.Scan {
	return web.Scan{ID: s.ID, Destination: s.Destination, Name: s.File, Size: s.Size, SHA256: s.SHA256, State: string(s.State),
		ReceivedAt: s.ReceivedAt, DeliveredAt: s.DeliveredAt, Attempts: s.Attempts, Error: s.Error}
}

func (r webReceiver) Status(ctx context.Context) (web.ReceiverStatus, error) {
	counts, err := r.st.Scans().Counts(ctx)
	if err != nil {
		return web.ReceiverStatus{}, err
	}
	st := web.ReceiverStatus{Counts: map[string]int{}, Enabled: len(counts) > 0}
	for state, n := range counts {
		if state != receiver.Purged {
			st.Counts[string(state)] = n
		}
	}
	if st.Enabled {
		st.Warnings = []string{"The fallback share is not running in this daemon ([receiver] enabled = false): held scans can be downloaded, not delivered."}
	}
	return st, nil
}

func (r webReceiver) Scans(ctx context.Context, state string, limit int) ([]web.Scan, error) {
	q := receiver.ScanQuery{Limit: limit, Newest: true}
	if state != "" {
		q.States = []receiver.State{receiver.State(state)}
	}
	scans, err := r.st.Scans().Scans(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]web.Scan, 0, len(scans))
	for _, s := range scans {
		out = append(out, webScan(s))
	}
	return out, nil
}

func (r webReceiver) Scan(ctx context.Context, id int64) (web.Scan, error) {
	s, err := r.st.Scans().Scan(ctx, id)
	if err != nil {
		return web.Scan{}, notFound(err)
	}
	return webScan(s), nil
}

// Open reads a held (or failed, or incomplete) scan's bytes from the data
// dir; the path comes from the catalogue, never from the file's name.
func (r webReceiver) Open(ctx context.Context, id int64) (io.ReadCloser, error) {
	s, err := r.st.Scans().Scan(ctx, id)
	if err != nil {
		return nil, notFound(err)
	}
	rel := s.HeldPath
	if rel == "" {
		rel = s.InboxPath
	}
	if rel == "" {
		return nil, fmt.Errorf("scan %d has no local copy: %w", id, web.ErrNotFound)
	}
	p := filepath.Join(r.dir, filepath.Clean("/"+rel))
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("scan %d: %w", id, web.ErrNotFound)
	}
	return f, err
}

func (r webReceiver) Deliver(context.Context, int64) error { return web.ErrNotRunning }
func (r webReceiver) Force(context.Context, int64) error   { return web.ErrNotRunning }
