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
	"strconv"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// Config is the receiver's whole configuration. Zero means zero: fill
// defaults (DefaultShare, port 445, DefaultWatch, DefaultForward) where the
// config is read.
type Config struct {
	// DataDir holds inbox/ (the share), held/ (catalogued scans) and, in
	// the one-process layout, smbd/.
	DataDir string
	// SmbdDir is smbd's folder (smb.conf, pid file, passdb, logs); zero:
	// DataDir/smbd. With ExternalSamba it is the root side's own folder
	// (PrepareShare writes it), which the receiver only reads.
	SmbdDir  string
	Listen   netip.Addr // the one address the share binds
	Port     int
	Share    string
	Accounts []samba.Account
	// SMB1 lets SMB1/NTLMv1 firmware in, on this share only (a standing
	// security warning in Status).
	SMB1 bool
	// Allow lists the networks that may connect to the share (the MFPs);
	// empty = any address that reaches Listen (a standing warning).
	// SetAllow replaces it while the receiver runs.
	Allow []netip.Prefix
	// AllowWarning, when not empty, is a standing warning in Status: why
	// Allow admits more than the MFPs (serve: no MFP registered yet).
	AllowWarning string
	// ExternalSamba: smbd runs under its own unit (the installed layout),
	// root renders its config. The receiver hands root only data — the
	// allowlist in AllowFile(DataDir) — and never writes smb.conf, runs a
	// Samba tool, starts, stops or signals smbd.
	ExternalSamba bool
	// KeepSamba leaves smbd running at Close (a daemon restart does not cut
	// transfers in flight). Without it Close stops smbd.
	KeepSamba bool
	Watch     WatchConfig
	Forward   ForwardConfig
	// SambaBin names the Samba programs (zero: found in PATH).
	SambaBin samba.Bin
}

// Validate names the first field that cannot be used.
func (c Config) Validate() error {
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		return badConfig("data_dir", c.DataDir, "must be an absolute path")
	}
	if c.Watch.Quiet <= 0 {
		return badConfig("quiet", c.Watch.Quiet.String(), "must be positive")
	}
	if c.Watch.Rescan <= 0 {
		return badConfig("rescan", c.Watch.Rescan.String(), "must be positive")
	}
	if c.Forward.Retry <= 0 || c.Forward.MaxRetry < c.Forward.Retry {
		return badConfig("retry", c.Forward.Retry.String(), "must be positive and at most max_retry")
	}
	if c.Forward.Poll <= 0 {
		return badConfig("poll", c.Forward.Poll.String(), "must be positive")
	}
	return c.samba().Validate()
}

// badConfig is the *scanwarden.FieldError for field; value shows quoted.
func badConfig(field, value, reason string) error {
	var v any
	if value != "" {
		v = strconv.Quote(value)
	}
	return &scanwarden.FieldError{Field: field, Value: v, Reason: reason}
}

func (c Config) samba() samba.Config {
	dir := c.SmbdDir
	if dir == "" {
		dir = filepath.Join(c.DataDir, "smbd")
	}
	return samba.Config{Dir: dir, Inbox: Inbox(c.DataDir), Listen: c.Listen, Port: c.Port,
		Share: c.Share, Accounts: c.Accounts, SMB1: c.SMB1, Allow: c.Allow, Bin: c.SambaBin}
}

// Receiver runs the fallback share: smbd, watcher, forwarder.
type Receiver struct {
	cfg    Config
	cat    Catalogue
	dests  Destinations
	remote Remote
	log    *slog.Logger
	samba  *samba.Server

	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan *string
	relay  chan struct{} // Relayout's request for the share's folders now
	fw     *forwarder
	w      *watcher

	names   nameLocks // its forwarders' choice of final names (forwarder.names)
	mu      sync.Mutex
	folders map[string]string  // share folder → destination
	allowMu sync.Mutex         // one SetAllow at a time
	allowW  string             // why the allowlist admits more than the MFPs (a standing warning); under mu
	stopped string             // why no scan can be taken from the inbox now ("" = they can); under mu
	share   *samba.ShareHealth // the share probe's last answer (nil: none yet); under mu
	// observer learns each MFP's SMB client from smbd's log (Observe).
	observer Observer
	// infoMu: one writeRunInfo at a time — the probe loop, the watcher's
	// signal and SetAllow write receiver.json through one temporary file.
	infoMu sync.Mutex
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
	r := &Receiver{cfg: cfg, cat: cat, dests: dests, remote: remote, log: log.With("component", "receiver"), samba: s,
		kick: make(chan *string, 16), relay: make(chan struct{}, 1), folders: map[string]string{}, allowW: cfg.AllowWarning}
	return r, nil
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
	if err := r.layout(ctx); err != nil {
		return err
	}
	if err := r.openSamba(ctx); err != nil {
		return err
	}
	r.writeRunInfo()
	if err := r.recover(ctx); err != nil {
		return err
	}
	var obs *observations // nil: no observer
	var onLogon func(samba.Observation)
	if r.observer != nil {
		obs = newObservations()
		onLogon = obs.put
	}
	w, err := r.openWatcher(samba.NewAudit(r.samba.AuditLog(), onLogon), obs)
	if err != nil {
		return err
	}
	r.w = w
	r.fw = r.forwarder()
	r.startLoops(ctx, w, obs)
	return nil
}

// openWatcher starts the inbox watcher: a scan it holds for a destination
// kicks the forwarder (and, with an observer, tells what its writer's
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
			select {
			case r.kick <- nil:
			default:
			}
		}
	}
	w.onSignal = func(problem string) {
		r.mu.Lock()
		r.stopped = problem
		r.mu.Unlock()
		r.writeRunInfo()
	}
	return w, nil
}

// startLoops runs the watcher's, the share probe's, the forwarder's and
// (with an observer) the observations' loops until Close.
func (r *Receiver) startLoops(ctx context.Context, w *watcher, obs *observations) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	r.wg.Add(3)
	go func() {
		defer r.wg.Done()
		defer w.close()
		r.watchLoop(ctx)
	}()
	if obs != nil {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			obs.run(ctx, r.observer)
		}()
	}
	go func() {
		defer r.wg.Done()
		r.probeLoop(ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.forwardLoop(ctx)
	}()
}

func (r *Receiver) ingester() *ingester {
	return &ingester{dataDir: r.cfg.DataDir, inbox: Inbox(r.cfg.DataDir), cat: r.cat, now: time.Now, buf: make([]byte, hashBuf),
		dest: r.destOf}
}

func (r *Receiver) forwarder() *forwarder {
	return newForwarder(r.cfg.Forward, r.cfg.DataDir, r.cat, r.dests, r.remote, r.log, &r.names)
}

// newForwarder is the one way a forwarder is built: the running receiver's
// (its configured timings) and the CLI's (DeliverNow, DeliverScan: the
// defaults, no receiver running). names nil: no receiver shares the names.
func newForwarder(cfg ForwardConfig, dataDir string, cat Catalogue, dests Destinations, remote Remote, log *slog.Logger, names *nameLocks) *forwarder {
	return &forwarder{cfg: cfg, dataDir: dataDir, cat: cat, dests: dests, remote: remote, claim: newClaim(), log: log, now: time.Now,
		copier: copier{dataDir: dataDir, names: names}}
}

func (r *Receiver) destOf(folder string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.folders[folder]
}

// layout makes one folder per registered destination plus _unsorted.
func (r *Receiver) layout(ctx context.Context) error {
	var dests []Destination
	if r.dests != nil {
		var err error
		if dests, err = r.dests.Destinations(ctx); err != nil {
			return fmt.Errorf("receiver: destinations: %w", err)
		}
	}
	folders := map[string]string{}
	for _, d := range append(dests, Destination{Folder: Unsorted}) {
		if d.Folder == "" || d.Folder != filepath.Base(d.Folder) || d.Folder == "." || d.Folder == ".." {
			r.log.Warn("destination has no usable folder name; its scans go to _unsorted", "destination", d.Name)
			continue
		}
		if err := os.MkdirAll(filepath.Join(Inbox(r.cfg.DataDir), d.Folder), 0o750); err != nil {
			return fmt.Errorf("receiver: folder %s: %w", d.Folder, err)
		}
		if d.Name != "" {
			folders[d.Folder] = d.Name
		}
	}
	r.mu.Lock()
	r.folders = folders
	r.mu.Unlock()
	return nil
}

// Relayout asks for the share's folders to be made from the registry now
// (a destination was added) instead of at the next rescan; it does not
// wait for them.
func (r *Receiver) Relayout() {
	select {
	case r.relay <- struct{}{}:
	default: // one is asked for already
	}
}

func (r *Receiver) watchLoop(ctx context.Context) {
	// the watcher runs its own loop; destinations are re-read on each rescan
	refresh := time.NewTicker(max(r.cfg.Watch.Rescan, time.Second))
	defer refresh.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.w.run(ctx)
	}()
	for {
		select {
		case <-ctx.Done():
			<-done
			return
		case <-r.relay:
			if err := r.layout(ctx); err != nil {
				r.log.Warn("share layout", "err", err)
			}
		case <-refresh.C:
			if err := r.layout(ctx); err != nil {
				r.log.Warn("share layout", "err", err)
			}
			if r.cfg.ExternalSamba && !r.samba.Alive() {
				r.samba.Track() // its unit may have (re)started it
			}
			if !r.cfg.ExternalSamba && !r.samba.Alive() {
				r.log.Error("smbd is gone; starting it again")
				if err := r.samba.Start(ctx); err != nil {
					r.log.Error("smbd restart failed", "err", err)
				} else {
					r.writeRunInfo()
				}
			}
		}
	}
}

func (r *Receiver) forwardLoop(ctx context.Context) {
	if r.remote == nil || r.dests == nil {
		<-ctx.Done()
		return
	}
	poll := time.NewTicker(r.cfg.Forward.Poll)
	defer poll.Stop()
	// retention 0 means purged right after delivery: the purge runs at least
	// a tenth of the retention apart, at most an hour
	purge := time.NewTicker(min(time.Hour, max(r.cfg.Forward.Retention/10, r.cfg.Forward.Poll)))
	defer purge.Stop()
	r.fw.purge(ctx)
	for {
		var only *string
		force := false
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		case only = <-r.kick:
			force = only != nil
		case <-purge.C:
			r.fw.purge(ctx)
			continue
		}
		if _, err := r.fw.deliverDue(ctx, only, force); err != nil && ctx.Err() == nil {
			r.log.Warn("delivery failed; retrying later", "err", err)
		}
	}
}

// Close stops the watcher and the forwarder; smbd stops too unless
// KeepSamba or ExternalSamba.
func (r *Receiver) Close() error {
	if r.cancel != nil {
		r.cancel()
		r.wg.Wait()
		r.cancel = nil
	}
	if !r.cfg.KeepSamba && !r.cfg.ExternalSamba {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		return r.samba.Stop(ctx)
	}
	return nil
}

// Samba is the managed smbd.
func (r *Receiver) Samba() *samba.Server { return r.samba }
