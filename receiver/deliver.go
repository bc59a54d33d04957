package receiver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Kick asks for an early delivery of destination's held scans (its check
// just turned green), past the back-off.
func (r *Receiver) Kick(destination string) {
	select {
	case r.kick <- &destination:
	default:
	}
}

// Deliver delivers destination's held scans now ("" = every destination's)
// in the caller's goroutine, past the back-off, and says how many.
func (r *Receiver) Deliver(ctx context.Context, destination string) (int, error) {
	fw := r.forwarder() // its own buffers: the background forwarder may be copying
	var only *string
	if destination != "" {
		only = &destination
	}
	return fw.deliverDue(ctx, only, true)
}

// errNoReceiver is returned where a running receiver is needed.
var errNoReceiver = errors.New("no receiver runs on this data dir")

// DeliverNow delivers held scans of destination ("" = all) now, without a
// running receiver (the CLI); claims keep it from delivering a scan that a
// running receiver is delivering.
func DeliverNow(ctx context.Context, dataDir string, cat Catalogue, dests Destinations, remote Remote, destination string) (int, error) {
	fw := newForwarder(DefaultForward, dataDir, cat, dests, remote, slog.New(slog.DiscardHandler), nil)
	var only *string
	if destination != "" {
		only = &destination
	}
	return fw.deliverDue(ctx, only, true)
}

// DeliverScan delivers one held (or failed) scan now, past the back-off
// (the web page's "deliver now"); a failure backs off with the receiver's
// configured timings, as its own deliveries do.
func (r *Receiver) DeliverScan(ctx context.Context, id int64) error {
	return r.forwarder().deliverScan(ctx, id)
}

func (fw *forwarder) deliverScan(ctx context.Context, id int64) error {
	cat, dests, remote := fw.cat, fw.dests, fw.remote
	sc, err := cat.Scan(ctx, id)
	if err != nil {
		return err
	}
	switch {
	case sc.State == Incomplete:
		return fmt.Errorf("scan %d is incomplete: force it first to deliver it as it is", id)
	case sc.State == Refused:
		return fmt.Errorf("scan %d is %s", id, sc.Error)
	case sc.State != Held && sc.State != Failed:
		return fmt.Errorf("scan %d is %s", id, sc.State)
	case sc.Destination == "":
		return fmt.Errorf("scan %d arrived in %s: it belongs to no destination", id, Unsorted)
	case remote == nil || dests == nil:
		return errNoReceiver
	}
	ds, err := dests.Destinations(ctx)
	if err != nil {
		return fmt.Errorf("destinations: %w", err)
	}
	for _, d := range ds {
		if d.Name != sc.Destination {
			continue
		}
		folder, err := fw.open(ctx, d, []Scan{sc})
		if err != nil {
			return err
		}
		defer folder.Close()
		return fw.deliver(ctx, folder, sc)
	}
	return fmt.Errorf("scan %d: destination %q is no longer registered", id, sc.Destination)
}
