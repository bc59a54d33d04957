package receiver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// ForwardConfig tunes delivery. Zero means zero; defaults in DefaultForward.
type ForwardConfig struct {
	Retry     time.Duration // first retry after a failed delivery
	MaxRetry  time.Duration // the back-off's ceiling
	Retention time.Duration // how long a delivered scan's local copy is kept
	Poll      time.Duration // how often due scans are looked for
}

// DefaultForward is the forwarder's default tuning.
var DefaultForward = ForwardConfig{Retry: 30 * time.Second, MaxRetry: 30 * time.Minute, Retention: 30 * 24 * time.Hour, Poll: time.Second}

// forwarder delivers held scans: temporary name → rename → read back and
// verify size and SHA-256 → delivered. Every step is safe to repeat after a
// crash.
type forwarder struct {
	cfg     ForwardConfig
	dataDir string
	cat     Catalogue
	dests   Destinations
	remote  Remote
	claim   string // this process's claim on rows it delivers
	log     *slog.Logger
	now     func() time.Time
	copier  copier // one scan into one folder, with its own buffers
}

// due returns the destinations with scans to deliver now (or all held ones
// when now is zero, for an on-demand delivery of only).
func (fw *forwarder) due(ctx context.Context, now time.Time, only *string) (map[string][]Scan, error) {
	q := ScanQuery{States: []State{Held, Failed}, Destination: only}
	if !now.IsZero() {
		q.DueBefore = now
	}
	rows, err := fw.cat.Scans(ctx, q)
	if err != nil {
		return nil, err
	}
	out := map[string][]Scan{}
	for _, r := range rows {
		if r.Destination == "" || r.HeldPath == "" {
			continue
		}
		out[r.Destination] = append(out[r.Destination], r)
	}
	return out, nil
}

// deliverDue delivers the due scans of every destination (one session per
// destination); force=true ignores the back-off. It returns how many were
// delivered and the first error.
func (fw *forwarder) deliverDue(ctx context.Context, only *string, force bool) (int, error) {
	now := fw.now()
	t := now
	if force {
		t = time.Time{}
	}
	byDest, err := fw.due(ctx, t, only)
	if err != nil {
		return 0, err
	}
	if len(byDest) == 0 {
		return 0, nil
	}
	dests, err := fw.dests.Destinations(ctx)
	if err != nil {
		return 0, fmt.Errorf("destinations: %w", err)
	}
	known := map[string]Destination{}
	for _, d := range dests {
		known[d.Name] = d
	}
	var n int
	var first error
	for name, scans := range byDest {
		d, ok := known[name]
		if !ok {
			continue // destination removed: the scans stay held
		}
		k, err := fw.deliverTo(ctx, d, scans)
		n += k
		if err != nil && first == nil {
			first = err
		}
	}
	return n, first
}

func (fw *forwarder) deliverTo(ctx context.Context, d Destination, scans []Scan) (int, error) {
	folder, err := fw.open(ctx, d, scans)
	if err != nil {
		return 0, err
	}
	defer folder.Close()
	var n int
	for _, sc := range scans {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		err := fw.deliver(ctx, folder, sc)
		if errors.Is(err, errClaimed) {
			continue // another delivery has it: not ours to count
		}
		if err != nil {
			return n, fmt.Errorf("destination %s: %w", d.Name, err)
		}
		n++
	}
	return n, nil
}

// open logs on to d's real folder for scans; when it cannot, each of them
// records a failed attempt (they could not even start).
func (fw *forwarder) open(ctx context.Context, d Destination, scans []Scan) (destFolder, error) {
	folder, err := fw.remote.Open(ctx, d.Target)
	if err != nil {
		for _, sc := range scans {
			fw.fail(ctx, sc, sc.State, err)
		}
		return destFolder{}, fmt.Errorf("destination %s: %w", d.Name, err)
	}
	return destFolder{folder, folderKey(d.Target)}, nil
}

func (fw *forwarder) backoff(attempts int) time.Duration {
	d := fw.cfg.Retry
	for i := 1; i < attempts && d < fw.cfg.MaxRetry; i++ {
		d *= 2
	}
	return min(d, fw.cfg.MaxRetry)
}

func (fw *forwarder) fail(ctx context.Context, sc Scan, from State, cause error) {
	sc.State = Failed
	sc.Attempts++
	sc.Error = cause.Error()
	sc.Claim = ""
	next := fw.backoff(sc.Attempts)
	if errors.Is(cause, ErrLogon) {
		// a logon failure is not retried blindly: it would eat the
		// account's lockout budget. The next green check delivers.
		next = fw.cfg.MaxRetry
	}
	sc.NextAttempt = fw.now().Add(next)
	fw.cat.UpdateScan(context.WithoutCancel(ctx), sc, from)
}

// errClaimed says another delivery (the background forwarder, an
// on-demand one, another process) took the scan first: it is neither
// delivered nor failed by this one.
var errClaimed = errors.New("another delivery has it in hand")

// deliver copies one scan: claim → temporary file, read back and compared
// → rename to a free name (a file already there with the same content
// counts as delivered) → delivered. A scan another delivery claimed first
// is left to it: errClaimed.
func (fw *forwarder) deliver(ctx context.Context, folder destFolder, sc Scan) error {
	from := sc.State
	sc.State, sc.Claim = Delivering, fw.claim
	if ok, err := fw.cat.UpdateScan(ctx, sc, from); err != nil {
		return err
	} else if !ok {
		return &DeliveryError{sc.ID, "claim", errClaimed}
	}
	// The content is judged again before it leaves: a row held before
	// the share judged content at ingest is refused here.
	if why := fw.refusal(sc); why != "" {
		sc.State, sc.Claim, sc.Error = Refused, "", RefusedPrefix+why
		if _, err := fw.cat.UpdateScan(context.WithoutCancel(ctx), sc, Delivering); err != nil {
			return err
		}
		fw.log.Warn("scan refused: not delivered", "id", sc.ID, "destination", sc.Destination, "file", sc.File, "why", why)
		return &DeliveryError{sc.ID, "check content", ErrRefused}
	}
	name, err := fw.copier.copyScan(ctx, folder, sc)
	if err != nil {
		fw.fail(ctx, sc, Delivering, err)
		return err
	}
	sc.State, sc.Claim, sc.Error, sc.RemoteName = Delivered, "", "", name
	sc.DeliveredAt = fw.now().UTC()
	if ok, err := fw.cat.UpdateScan(context.WithoutCancel(ctx), sc, Delivering); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("scan %d: left delivering by another", sc.ID)
	}
	fw.log.Info("scan delivered", "id", sc.ID, "destination", sc.Destination, "file", name, "size", sc.Size)
	return nil
}

// ErrRefused: the scan's content is not a format the share delivers.
var ErrRefused = errors.New("refused: not a scan format, or its name does not agree with its content")

// refusal says why the held copy of sc must not be delivered ("" = it may;
// an unreadable copy is left to copyScan's error).
func (fw *forwarder) refusal(sc Scan) string {
	f, err := openHeld(fw.dataDir, sc.HeldPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, ok, why := Sniff(f, sc.Size, sc.File); !ok {
		return why
	}
	return ""
}

// purge removes the local copies of scans delivered longer ago than the
// retention.
func (fw *forwarder) purge(ctx context.Context) (int, error) {
	rows, err := fw.cat.Scans(ctx, ScanQuery{States: []State{Delivered}})
	if err != nil {
		return 0, err
	}
	cut := fw.now().Add(-fw.cfg.Retention)
	var n int
	for _, sc := range rows {
		if sc.DeliveredAt.After(cut) {
			continue
		}
		sc.State = Purged
		if ok, err := fw.cat.UpdateScan(ctx, sc, Delivered); err != nil || !ok {
			continue
		}
		// below held/ only, through the data dir's fd (the row is data
		// the daemon's user writes)
		err := below("held", sc.HeldPath)
		if err == nil {
			var p place
			if p, err = at(fw.dataDir, sc.HeldPath, false); err == nil {
				err = p.dir.Remove(p.name)
				p.close()
			}
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fw.log.Warn("purge: cannot remove held copy", "id", sc.ID, "err", err)
		}
		n++
	}
	return n, nil
}
