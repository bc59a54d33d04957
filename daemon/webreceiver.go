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

func (r webReceiver) Status(ctx context.Context) (receiver.StatusView, error) {
	counts, err := r.st.Scans().Counts(ctx)
	if err != nil {
		return receiver.StatusView{}, err
	}
	st := receiver.StatusView{Counts: map[string]int{}, Enabled: len(counts) > 0}
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

func (r webReceiver) Scans(ctx context.Context, state string, limit int) ([]receiver.ScanView, error) {
	q := receiver.ScanQuery{Limit: limit, Newest: true}
	if state != "" {
		q.States = []receiver.State{receiver.State(state)}
	}
	scans, err := r.st.Scans().Scans(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]receiver.ScanView, 0, len(scans))
	for _, s := range scans {
		out = append(out, s.View())
	}
	return out, nil
}

func (r webReceiver) Scan(ctx context.Context, id int64) (receiver.ScanView, error) {
	s, err := r.st.Scans().Scan(ctx, id)
	if err != nil {
		return receiver.ScanView{}, notFound(err)
	}
	return s.View(), nil
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
