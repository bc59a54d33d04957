// Package receiver is scanwarden's fallback scan share: its own smbd takes
// scans while a destination's real folder is broken, a watcher decides when
// each file is complete, the catalogue holds it (hashed, moved atomically),
// and a forwarder delivers it, verified, once the real folder works again.
package receiver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/safefile"
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

// Inbox is the share's folder in a data dir.
func Inbox(dataDir string) string { return filepath.Join(dataDir, "inbox") }

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

// runInfo is what `receiver status` reads from another process (no secret).
type runInfo struct {
	Listen       string   `json:"listen"`
	Port         int      `json:"port"`
	Share        string   `json:"share"`
	SMB1         bool     `json:"smb1"`
	Pid          int      `json:"pid"`
	SmbdDir      string   `json:"smbd_dir"`
	Allow        []string `json:"allow"`
	AllowWarning string   `json:"allow_warning,omitempty"`
	// IngestStopped: why nothing is taken from the inbox ("" = it is).
	IngestStopped string `json:"ingest_stopped,omitempty"`
	// Account is the MFP account the share probe logs on as; External:
	// smbd runs under its own unit.
	Account  string `json:"account,omitempty"`
	External bool   `json:"external,omitempty"`
	// ShareCheck is the receiver's last probe of its share (ProbeShare).
	ShareCheck *samba.ShareHealth `json:"share_check,omitempty"`
}

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

// openSamba starts smbd — or, when the root side runs it (ExternalSamba),
// hands that side the allow list and finds its smbd.
func (r *Receiver) openSamba(ctx context.Context) error {
	if !r.cfg.ExternalSamba {
		return r.samba.Start(ctx)
	}
	// The root side (`scanwarden receiver prepare`, run by the smbd
	// unit) renders smb.conf from root's config and this list, makes
	// the accounts, and reloads smbd when the list changes (a path
	// unit watches the file).
	if _, err := samba.WriteAllowFile(samba.AllowFile(r.cfg.DataDir), r.cfg.Allow); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	// Older versions kept smbd's config here, written by the daemon:
	// removed (as the daemon's user), so nothing of it is left for an
	// smbd to read.
	if old := filepath.Join(r.cfg.DataDir, "smbd"); old != r.samba.Config().Dir {
		if err := os.RemoveAll(old); err != nil {
			r.log.Warn("old smbd folder not removed", "dir", old, "err", err)
		}
	}
	r.samba.Track()
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
	return &forwarder{cfg: cfg, dataDir: dataDir, cat: cat, dests: dests, remote: remote, claim: newClaim(), log: log, now: time.Now, names: names}
}

func (r *Receiver) destOf(folder string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.folders[folder]
}

func (r *Receiver) writeRunInfo() {
	r.infoMu.Lock()
	defer r.infoMu.Unlock()
	allow := []string{}
	for _, p := range r.samba.Config().Allow {
		allow = append(allow, p.Masked().String())
	}
	r.mu.Lock()
	warn, stopped, share := r.allowW, r.stopped, r.share
	r.mu.Unlock()
	account := ""
	if len(r.cfg.Accounts) > 0 {
		account = r.cfg.Accounts[0].Name
	}
	b, _ := json.Marshal(runInfo{Listen: r.cfg.Listen.String(), Port: r.cfg.Port, Share: r.cfg.Share, SMB1: r.cfg.SMB1, Pid: r.samba.Pid(),
		SmbdDir: r.samba.Config().Dir, Allow: allow, AllowWarning: warn, IngestStopped: stopped, Account: account, External: r.cfg.ExternalSamba,
		ShareCheck: share})
	tmp := filepath.Join(r.cfg.DataDir, "receiver.json.new")
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, filepath.Join(r.cfg.DataDir, "receiver.json"))
	}
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

// recover finishes what a crash interrupted: rows left delivering by a dead
// process go back to held; a row committed whose file did not leave the
// inbox gets its move; purged rows lose a held copy left behind.
func (r *Receiver) recover(ctx context.Context) error {
	rows, err := r.cat.Scans(ctx, ScanQuery{States: []State{Held, Failed, Delivering, Purged, Refused}})
	if err != nil {
		return fmt.Errorf("receiver: recover: %w", err)
	}
	g := r.ingester()
	own := "" // no claim of ours exists yet
	for _, sc := range rows {
		if sc.HeldPath != "" && below("held", sc.HeldPath) != nil {
			r.log.Error("scan's held path is not below held/: refused", "id", sc.ID, "held_path", sc.HeldPath)
			continue
		}
		switch sc.State {
		case Purged:
			if p, err := at(r.cfg.DataDir, sc.HeldPath, false); err == nil {
				p.dir.Remove(p.name)
				p.close()
			}
			continue
		case Delivering:
			if claimAlive(sc.Claim, own) {
				continue
			}
			from := sc.State
			sc.State, sc.Claim, sc.NextAttempt = Held, "", time.Time{}
			if _, err := r.cat.UpdateScan(ctx, sc, from); err != nil {
				return fmt.Errorf("receiver: recover: %w", err)
			}
		}
		if sc.HeldPath == "" || heldExists(r.cfg.DataDir, sc.HeldPath) {
			continue
		}
		moved, open, err := g.finishMove(sc.InboxPath, sc.HeldPath, sc)
		if err != nil {
			return fmt.Errorf("receiver: recover scan %d: %w", sc.ID, err)
		}
		if moved {
			r.log.Info("recovered: moved a catalogued scan out of the inbox", "id", sc.ID, "file", sc.File)
			continue
		}
		if open {
			// written on since its row: the row has a part of it; the
			// watcher takes it whole once closed
			if _, err := r.cat.DeleteScan(ctx, sc.ID, sc.State); err != nil {
				return fmt.Errorf("receiver: recover scan %d: %w", sc.ID, err)
			}
			r.log.Info("recovered: a catalogued scan is being written again; its row is dropped and it is taken once closed", "id", sc.ID, "file", sc.File)
			continue
		}
		from := sc.State
		if sc.State == Refused {
			r.log.Error("refused scan has no held copy", "id", sc.ID, "file", sc.File)
			continue
		}
		sc.State, sc.Error = Failed, "held copy missing (removed from "+filepath.Join(r.cfg.DataDir, filepath.Dir(sc.HeldPath))+" by hand?)"
		sc.NextAttempt = time.Now().Add(100 * 365 * 24 * time.Hour)
		r.cat.UpdateScan(ctx, sc, from)
		r.log.Error("catalogued scan has no held copy", "id", sc.ID, "file", sc.File)
	}
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

// Force lets an incomplete scan be delivered as it is: it is catalogued as
// held (marked forced) and leaves the inbox.
func (r *Receiver) Force(ctx context.Context, id int64) (Scan, error) {
	return Force(ctx, r.cfg.DataDir, r.cat, id)
}

// Force does Receiver.Force without a running receiver (the CLI).
func Force(ctx context.Context, dataDir string, cat Catalogue, id int64) (Scan, error) {
	sc, err := cat.Scan(ctx, id)
	if err != nil {
		return Scan{}, err
	}
	if sc.State != Incomplete {
		return Scan{}, fmt.Errorf("scan %d is %s, not incomplete", id, sc.State)
	}
	// both paths come from the database the daemon's user writes, and
	// force may run as root: below inbox/ and held/ only, every folder
	// reached through the data dir's fd (ingest)
	if err := below("inbox", sc.InboxPath); err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	src, err := at(dataDir, sc.InboxPath, false)
	if err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	snap, st, err := src.lstat()
	src.close()
	if err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Scan{}, fmt.Errorf("scan %d: %s: not a regular file", id, sc.InboxPath)
	}
	g := &ingester{dataDir: dataDir, inbox: Inbox(dataDir), cat: cat, now: time.Now, buf: make([]byte, hashBuf),
		dest: func(string) string { return sc.Destination }}
	out, got, err := g.ingest(ctx, filepath.Join(dataDir, sc.InboxPath), snap, sc.Writer, true)
	if err != nil {
		return Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	if out != ingested {
		return Scan{}, fmt.Errorf("scan %d changed while being forced; try again", id)
	}
	return got, nil
}

// Status is the receiver's state for `receiver status` and the web page.
type Status struct {
	SmbdUp bool `json:"smbd_up"`
	// Fault says why the share cannot take a scan although smbd may run
	// (the share probe's failure: its detail and fix, e.g. the package to
	// install). "" when none is known.
	Fault string `json:"fault,omitempty"`
	// ShareCheck is the share probe (an MFP's logon and tree connect) the
	// status is judged on: the running receiver's last one, or the
	// caller's own; nil when none was made.
	ShareCheck *samba.ShareHealth `json:"share_check,omitempty"`
	SmbdPid    int                `json:"smbd_pid,omitempty"`
	Listen     string             `json:"listen"`
	Port       int                `json:"port"`
	Share      string             `json:"share"`
	SMB1       bool               `json:"smb1"`
	// Allow are the networks that may connect to the share; empty: any
	// address (a standing warning).
	Allow    []string `json:"allow"`
	Warnings []string `json:"warnings"`
	// IngestStopped says why no scan is taken from the inbox now (the
	// receiver cannot tell whether smbd still writes them); "" when they
	// are. It is among Warnings too.
	IngestStopped string         `json:"ingest_stopped,omitempty"`
	Inbox         int            `json:"inbox"`       // files in the inbox not yet catalogued (incomplete ones included)
	InboxBytes    int64          `json:"inbox_bytes"` // their bytes
	Counts        map[State]int  `json:"counts"`
	HeldBytes     int64          `json:"held_bytes"` // bytes of held (undelivered) scans
	OldestHeld    *time.Time     `json:"oldest_held"`
	LastError     *DeliveryState `json:"last_delivery_error"`
	FreeBytes     int64          `json:"free_bytes"` // free space of the data dir's filesystem
}

// lowSpace is the free space below which Status warns: uploads that do not
// fit are refused to the MFP (it shows a send error) and nothing new can be
// catalogued.
const lowSpace = 100 << 20

// DeliveryState is the last failed delivery.
type DeliveryState struct {
	Scan    int64     `json:"scan"`
	Error   string    `json:"error"`
	RetryAt time.Time `json:"retry_at"`
}

// SMB1Warning is the standing warning while SMB1 is on.
const SMB1Warning = "SMB1/NTLMv1 is ON for the fallback share: old firmware can log on, and so can anything that breaks SMB1 or cracks NTLMv1 responses on this network; switch it off once the MFPs are updated"

// ReadAllow reads, from another process, who may connect to the share of
// the receiver last run on dataDir: the networks (empty: any address) and
// the standing warning about them ("" when none). ok is false when no
// receiver ran there.
func ReadAllow(dataDir string) (allow []string, warning string, ok bool) {
	info, ok := readRunInfo(dataDir)
	if !ok {
		return nil, "", false
	}
	warning = info.AllowWarning
	if warning == "" && len(info.Allow) == 0 {
		warning = anyAddressWarning
	}
	return info.Allow, warning, true
}

// IngestStoppedWarning is the standing warning while no scan can be taken
// from the inbox, for why.
func IngestStoppedWarning(why string) string {
	return "scans are held in the inbox, not taken: " + why
}

// ReadIngestStopped reads, from another process, why the receiver last run
// on dataDir takes no scan from its inbox ("" when it takes them); ok is
// false when no receiver ran there.
func ReadIngestStopped(dataDir string) (why string, ok bool) {
	info, ok := readRunInfo(dataDir)
	return info.IngestStopped, ok
}

// anyAddressWarning is the standing warning while no allowlist is set.
const anyAddressWarning = "the fallback share admits any address that reaches it: list the MFPs' addresses or networks ([receiver] allow, receiver run --allow)"

// SetAllow replaces the share's allowlist while it runs: smb.conf is
// rewritten, validated by testparm (refused: the running list stays) and
// smbd reloads it (new connections are checked against the new list).
// warning, when not empty, is a standing warning in Status: why the list
// admits more than the MFPs.
func (r *Receiver) SetAllow(ctx context.Context, allow []netip.Prefix, warning string) error {
	r.allowMu.Lock()
	defer r.allowMu.Unlock()
	var changed bool
	var err error
	if r.cfg.ExternalSamba {
		changed, err = r.samba.HandAllow(allow)
	} else {
		changed, err = r.samba.SetAllow(ctx, allow)
	}
	if err != nil {
		return fmt.Errorf("receiver allow: %w", err)
	}
	r.mu.Lock()
	r.allowW = warning
	r.mu.Unlock()
	r.writeRunInfo()
	if !changed || r.cfg.ExternalSamba {
		return nil // under its own unit: the path unit reloads it
	}
	if r.samba.Alive() {
		if err := r.samba.Reload(); err != nil {
			return fmt.Errorf("receiver allow: %w", err)
		}
	}
	return nil
}

// Status reads the receiver's state from disk and the catalogue; it works
// from another process (the CLI) as well. The share is judged on the
// receiver's last probe (probeLoop).
func (r *Receiver) Status(ctx context.Context) (Status, error) {
	r.mu.Lock()
	share := r.share
	r.mu.Unlock()
	return readStatus(ctx, r.cfg.DataDir, r.cat, share)
}

// How often the running receiver probes its share: a failing share again
// soon (a fix shows within seconds), a working one once a minute (one
// logon, one line in smbd's log).
const (
	probeEvery       = time.Minute
	probeFailedEvery = 10 * time.Second
)

// probeLoop probes the share (ProbeShare as the first MFP account) now and
// then every probeEvery (probeFailedEvery while it fails), records the
// answer for Status and receiver.json, and logs each change.
func (r *Receiver) probeLoop(ctx context.Context) {
	if len(r.cfg.Accounts) == 0 {
		<-ctx.Done()
		return
	}
	p := samba.ShareProbe{Listen: r.cfg.Listen, Port: r.cfg.Port, Share: r.cfg.Share, Account: r.cfg.Accounts[0], Inbox: Inbox(r.cfg.DataDir),
		SmbdDir: r.samba.Config().Dir, Smbd: r.cfg.SambaBin.Smbd, Unit: r.cfg.ExternalSamba}
	t := time.NewTimer(0)
	defer t.Stop()
	var last samba.ShareCause
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h := samba.ProbeShare(ctx, p)
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		r.share = &h
		r.mu.Unlock()
		r.writeRunInfo()
		switch {
		case h.Cause == last:
		case h.OK():
			r.log.Info("the fallback share takes scans", "probe", h.Detail)
		default:
			r.log.Error("the fallback share refuses the MFPs", "cause", string(h.Cause), "nt_status", h.NTStatus, "detail", h.Detail, "fix", h.Fix, "smbd_log", h.SmbdLog)
		}
		last = h.Cause
		if h.OK() {
			t.Reset(probeEvery)
		} else {
			t.Reset(probeFailedEvery)
		}
	}
}

// ReadStatus is Status for a data dir, without a running receiver. share
// is the caller's own probe of the share; nil: the running receiver's last
// one (in receiver.json), if any.
func ReadStatus(ctx context.Context, dataDir string, cat Catalogue, share *samba.ShareHealth) (Status, error) {
	return readStatus(ctx, dataDir, cat, share)
}

// ReadShareProbe is the probe of the share the receiver last run on
// dataDir serves (from receiver.json), without the password: the caller
// sets Account.Password. ok is false when no receiver ran there.
func ReadShareProbe(dataDir string) (p samba.ShareProbe, ok bool) {
	info, ok := readRunInfo(dataDir)
	if !ok {
		return samba.ShareProbe{}, false
	}
	ip, err := netip.ParseAddr(info.Listen)
	if err != nil {
		return samba.ShareProbe{}, false
	}
	return samba.ShareProbe{Listen: ip, Port: info.Port, Share: info.Share, Account: samba.Account{Name: info.Account}, Inbox: Inbox(dataDir),
		SmbdDir: info.SmbdDir, Unit: info.External}, true
}

func readRunInfo(dataDir string) (runInfo, bool) {
	var info runInfo
	// root's commands read it too (receiver status, doctor): the daemon's file
	b, err := safefile.Read(filepath.Join(dataDir, "receiver.json"), 1<<20) // dataDir not followed when a link
	if err != nil || json.Unmarshal(b, &info) != nil || info.Listen == "" {
		return runInfo{}, false
	}
	return info, true
}

func readStatus(ctx context.Context, dataDir string, cat Catalogue, share *samba.ShareHealth) (Status, error) {
	st := Status{Counts: map[State]int{}, Warnings: []string{}}
	info, _ := readRunInfo(dataDir)
	if share == nil {
		share = info.ShareCheck
	}
	st.Listen, st.Port, st.Share, st.SMB1 = info.Listen, info.Port, info.Share, info.SMB1
	st.Allow = append([]string{}, info.Allow...)
	if info.IngestStopped != "" {
		st.IngestStopped = info.IngestStopped
		st.Warnings = append(st.Warnings, IngestStoppedWarning(info.IngestStopped))
	}
	if st.SMB1 {
		st.Warnings = append(st.Warnings, SMB1Warning)
	}
	switch {
	case info.AllowWarning != "":
		st.Warnings = append(st.Warnings, info.AllowWarning)
	case info.Listen != "" && len(info.Allow) == 0:
		st.Warnings = append(st.Warnings, anyAddressWarning)
	}
	if info.Listen != "" {
		if ip, err := netip.ParseAddr(info.Listen); err == nil {
			dir := info.SmbdDir
			if dir == "" {
				dir = filepath.Join(dataDir, "smbd")
			}
			if pid := samba.Find(dir); pid != 0 {
				st.SmbdUp, st.SmbdPid = true, pid
			}
			if st.SmbdUp && !samba.Listening(ip, info.Port) {
				st.SmbdUp = false
				st.Warnings = append(st.Warnings, "smbd runs but does not answer on its port")
			}
			if st.ShareCheck = share; share != nil && !share.OK() {
				st.Fault = share.Summary()
			}
		}
	}
	var fsst unix.Statfs_t
	if err := unix.Statfs(dataDir, &fsst); err == nil {
		st.FreeBytes = int64(fsst.Bavail) * int64(fsst.Bsize)
		if st.FreeBytes < lowSpace {
			st.Warnings = append(st.Warnings, fmt.Sprintf("the data dir's disk is nearly full (%d KiB free): uploads that do not fit are refused to the MFP, and nothing new is catalogued until space is freed; nothing held is lost", st.FreeBytes>>10))
		}
	}
	filepath.WalkDir(Inbox(dataDir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				st.Inbox++
				st.InboxBytes += fi.Size()
			}
		}
		return nil
	})
	sum, err := cat.ScanStats(ctx)
	if err != nil {
		return st, err
	}
	for k, v := range sum.Counts {
		st.Counts[k] = v
	}
	st.HeldBytes = sum.HeldBytes
	if !sum.OldestHeld.IsZero() {
		t := sum.OldestHeld
		st.OldestHeld = &t
	}
	if sc := sum.LastFailed; sc != nil {
		st.LastError = &DeliveryState{Scan: sc.ID, Error: sc.Error, RetryAt: sc.NextAttempt}
	}
	return st, nil
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
		folder, err := remote.Open(ctx, d.Target)
		if err != nil {
			fw.fail(ctx, sc, sc.State, err)
			return fmt.Errorf("destination %s: %w", d.Name, err)
		}
		defer folder.Close()
		return fw.deliver(ctx, folder, d, sc)
	}
	return fmt.Errorf("scan %d: destination %q is no longer registered", id, sc.Destination)
}

// isZombie says whether pid is a zombie (or gone): a claim's process that
// died but was not reaped is no longer delivering.
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}
