// Package receiver is scanwarden's fallback scan share: its own smbd takes
// scans while a destination's real folder is broken, a watcher decides when
// each file is complete, the catalogue holds it (hashed, moved atomically),
// and a forwarder delivers it, verified, once the real folder works again.
// The smbd itself (its config, process, log and probe) is package samba's;
// the receiver takes what smbd leaves in the inbox.
package receiver

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// Receiver runs the fallback share: it wires its parts — the share's keeper
// (smbd, allowlist, probe), its folders, the inbox's watcher and ingester,
// the dispatcher of deliveries, receiver.json — under one run context.
type Receiver struct {
	cfg Config
	cat Catalogue
	log *slog.Logger
	// observer learns each MFP's SMB client from smbd's log (Observe).
	observer Observer

	share   *shareKeeper
	folders *folders
	post    *dispatcher
	info    *runFile

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New checks the config; nothing starts before Open.
func New(cfg Config, cat Catalogue, dests Destinations, remote Remote, log *slog.Logger) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := samba.New(cfg.samba())
	if err != nil {
		return nil, err
	}
	log = log.With("component", "receiver")
	info := &runFile{cfg: cfg, samba: s, allowW: cfg.AllowWarning}
	return &Receiver{cfg: cfg, cat: cat, log: log, info: info,
		share:   &shareKeeper{cfg: cfg, samba: s, info: info, log: log},
		folders: newFolders(Inbox(cfg.DataDir), dests, cfg.Watch.Rescan, log),
		post: &dispatcher{cfg: cfg.Forward, dataDir: cfg.DataDir, cat: cat, dests: dests, remote: remote, log: log,
			kick: make(chan *string, 16)},
	}, nil
}

// Observe makes the receiver tell obs what each MFP's logons and scans on
// the share show about its SMB client (observe.go); call it before Open.
func (r *Receiver) Observe(obs Observer) { r.observer = obs }

// Open starts (or finds) smbd, lays out the share, finishes what a crash
// left half done, and starts the watcher and the forwarder.
func (r *Receiver) Open(ctx context.Context) error {
	for _, d := range []string{r.cfg.DataDir, filepath.Join(r.cfg.DataDir, "held")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("receiver: %w", err)
		}
	}
	if err := os.MkdirAll(Inbox(r.cfg.DataDir), 0o750); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	if err := r.folders.layout(ctx); err != nil {
		return err
	}
	if err := r.share.open(ctx); err != nil {
		return err
	}
	r.info.write()
	if err := r.ingester().recover(ctx, r.log); err != nil {
		return err
	}
	var obs *observations // nil: no observer
	var onLogon func(samba.Observation)
	if r.observer != nil {
		obs = newObservations()
		onLogon = obs.put
	}
	w, err := r.openWatcher(samba.NewAudit(r.share.samba.AuditLog(), onLogon), obs)
	if err != nil {
		return err
	}
	r.startLoops(ctx, w, obs)
	return nil
}

// openWatcher starts the inbox watcher: a scan it holds for a destination
// wakes the forwarder (and, with an observer, tells what its writer's
// client did, to obs); a problem with its signal stops taking scans, said
// in receiver.json.
func (r *Receiver) openWatcher(audit *samba.Audit, obs *observations) (*watcher, error) {
	w := newWatcher(r.cfg.Watch, Inbox(r.cfg.DataDir), r.ingester(), audit, r.log)
	if err := w.start(); err != nil {
		return nil, err
	}
	w.onScan = func(sc Scan, out outcome) {
		if out == ingested && sc.State == Held {
			if o, ok := fileObservation(sc.Writer, sc.File, sc.ReceivedAt); ok {
				obs.put(o)
			}
		}
		if out == ingested && sc.State == Held && sc.Destination != "" {
			r.post.wake(nil)
		}
	}
	w.onSignal = r.info.setStopped
	return w, nil
}

// startLoops runs each part's loop until Close: the watcher's, the
// folders', the share keeper's two, the dispatcher's and (with an
// observer) the observations'.
func (r *Receiver) startLoops(ctx context.Context, w *watcher, obs *observations) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	loops := []func(context.Context){
		func(ctx context.Context) {
			defer w.close()
			w.run(ctx)
		},
		r.folders.loop, r.share.tendLoop, r.share.probeLoop, r.post.loop,
	}
	if obs != nil {
		loops = append(loops, func(ctx context.Context) { obs.run(ctx, r.observer) })
	}
	r.wg.Add(len(loops))
	for _, loop := range loops {
		go func() {
			defer r.wg.Done()
			loop(ctx)
		}()
	}
}

func (r *Receiver) ingester() *ingester {
	return &ingester{dataDir: r.cfg.DataDir, inbox: Inbox(r.cfg.DataDir), cat: r.cat, now: time.Now, buf: make([]byte, hashBuf),
		dest: r.folders.destOf}
}

// Close stops the watcher and the forwarder; smbd stops too unless
// KeepSamba or ExternalSamba.
func (r *Receiver) Close() error {
	if r.cancel != nil {
		r.cancel()
		r.wg.Wait()
		r.cancel = nil
	}
	return r.share.close()
}

// Samba is the managed smbd.
func (r *Receiver) Samba() *samba.Server { return r.share.samba }

// SetAllow replaces the share's allowlist while it runs: smb.conf is
// rewritten, validated by testparm (refused: the running list stays) and
// smbd reloads it (new connections are checked against the new list).
// warning, when not empty, is a standing warning in Status: why the list
// admits more than the MFPs.
func (r *Receiver) SetAllow(ctx context.Context, allow []netip.Prefix, warning string) error {
	return r.share.setAllow(ctx, allow, warning)
}

// ShareHealth is the running receiver's last probe of its share (nil: none
// yet), as a bridged destination's health reads it.
func (r *Receiver) ShareHealth() *samba.ShareHealth { return r.info.lastShare() }

// Status reads the receiver's state from disk and the catalogue; it works
// from another process (the CLI) as well. The share is judged on the
// receiver's last probe (probeLoop).
func (r *Receiver) Status(ctx context.Context) (Status, error) {
	return ReadStatus(ctx, r.cfg.DataDir, r.cat, r.info.lastShare())
}

// Relayout asks for the share's folders to be made from the registry now
// (a destination was added) instead of at the next rescan; it does not
// wait for them.
func (r *Receiver) Relayout() { r.folders.ask() }

// Force lets an incomplete scan be delivered as it is: it is catalogued as
// held (marked forced) and leaves the inbox.
func (r *Receiver) Force(ctx context.Context, id int64) (Scan, error) {
	return Force(ctx, r.cfg.DataDir, r.cat, id)
}

// Kick asks for an early delivery of destination's held scans (its check
// just turned green), past the back-off.
func (r *Receiver) Kick(destination string) { r.post.wake(&destination) }

// Deliver delivers destination's held scans now ("" = every destination's)
// in the caller's goroutine, past the back-off, and says how many.
func (r *Receiver) Deliver(ctx context.Context, destination string) (int, error) {
	return r.post.deliver(ctx, destination)
}

// DeliverScan delivers one held (or failed) scan now, past the back-off
// (the web page's "deliver now"); a failure backs off with the receiver's
// configured timings, as its own deliveries do.
func (r *Receiver) DeliverScan(ctx context.Context, id int64) error {
	return r.post.forwarder().deliverScan(ctx, id)
}
