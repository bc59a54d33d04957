package receiver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// dispatcher runs the receiver's deliveries: its background forwarder,
// every Poll and when woken, and the deliveries asked for now, each by a
// forwarder of its own (its own buffers: the background one may be
// copying). They all share its names locks.
type dispatcher struct {
	cfg     ForwardConfig
	dataDir string
	cat     Catalogue
	dests   Destinations
	remote  Remote
	log     *slog.Logger
	kick    chan *string // wakes the background forwarder
	names   nameLocks    // its forwarders' choice of final names (copier.names)
}

func (d *dispatcher) forwarder() *forwarder {
	return newForwarder(d.cfg, d.dataDir, d.cat, d.dests, d.remote, d.log, &d.names)
}

// newForwarder is the one way a forwarder is built: the running receiver's
// (its configured timings) and the CLI's (DeliverNow, DeliverScan: the
// defaults, no receiver running). names nil: no receiver shares the names.
func newForwarder(cfg ForwardConfig, dataDir string, cat Catalogue, dests Destinations, remote Remote, log *slog.Logger, names *nameLocks) *forwarder {
	return &forwarder{cfg: cfg, dataDir: dataDir, cat: cat, dests: dests, remote: remote, claim: newClaim(), log: log, now: time.Now,
		copier: copier{dataDir: dataDir, names: names}}
}

// wake asks the background forwarder for a delivery now: of only's held
// scans past the back-off, or (nil) of the scans due.
func (d *dispatcher) wake(only *string) {
	select {
	case d.kick <- only:
	default:
	}
}

// deliver is Receiver.Deliver.
func (d *dispatcher) deliver(ctx context.Context, destination string) (int, error) {
	var only *string
	if destination != "" {
		only = &destination
	}
	return d.forwarder().deliverDue(ctx, only, true)
}

// loop runs the background forwarder until ctx ends: the scans due every
// Poll, those it is woken for, the purge of delivered copies now and then.
func (d *dispatcher) loop(ctx context.Context) {
	if d.remote == nil || d.dests == nil {
		<-ctx.Done()
		return
	}
	fw := d.forwarder()
	poll := time.NewTicker(d.cfg.Poll)
	defer poll.Stop()
	// retention 0 means purged right after delivery: the purge runs at least
	// a tenth of the retention apart, at most an hour
	purge := time.NewTicker(min(time.Hour, max(d.cfg.Retention/10, d.cfg.Poll)))
	defer purge.Stop()
	fw.purge(ctx)
	for {
		var only *string
		force := false
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case only = <-d.kick:
			force = only != nil
		case <-purge.C:
			fw.purge(ctx)
			continue
		}
		if _, err := fw.deliverDue(ctx, only, force); err != nil && ctx.Err() == nil {
			d.log.Warn("delivery failed; retrying later", "err", err)
		}
	}
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
