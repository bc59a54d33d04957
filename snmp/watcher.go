package snmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/resolve"
)

// WatcherConfig holds every setting of a Watcher. Zero means zero: nothing
// here is filled in behind the caller's back; DefaultWatcherConfig gives the
// usual values to start from.
type WatcherConfig struct {
	// Targets are the devices polled every Poller.Interval.
	Targets []Target
	// Networks are swept once, right after Open, with SweepTarget's
	// credentials; the Kyocera devices found join Targets.
	Networks    []netip.Prefix
	SweepTarget Target       // credentials, timeout and retries for the sweep (Host and Port unused)
	Sweep       SweepOptions // port, bound, rate and workers of the sweep
	// Poller tunes the poll cycles; Workers and Interval must be set.
	Poller PollerConfig
	// Cycles stops polling after that many cycles (Done is closed); 0 polls
	// until Close.
	Cycles int
	// Traps and Mail are the listeners; nil leaves one off.
	Traps *TrapListenerConfig
	Mail  *MailListenerConfig

	Rules *Rules // required
	Store Store  // required: where devices and events are kept (persisted, de-duplicated)
	// OnEvent is told of each fresh event of a device once stored (nil:
	// stored only); OnStoreError hears every error Store returns (nil:
	// each part logs its own).
	OnEvent      func(ctx context.Context, ev Event)
	OnStoreError func(error)
	Log          *slog.Logger // nil: discard
	// Names resolves the devices given by name and keeps their last good
	// addresses; nil: a cache of the watcher's own over the system's
	// resolver. The daemon keeps one across reloads.
	Names *resolve.Cache

	// OnStart, when set, is called once the sweep (if any) is done and
	// polling begins; OnCycle after each poll cycle (a cancelled one too).
	OnStart func(WatchStart)
	OnCycle func(WatchCycle)
}

// Listeners is what the device reports are taken on besides the polls:
// the trap listener (TrapAddr "" none) with the communities and the SNMPv3
// user it accepts, the mail listener (SMTPAddr "" none), the networks
// both admit, and where the v3 replay guard keeps its state.
type Listeners struct {
	TrapAddr    string
	Communities []scanwarden.Secret
	User        *V3Auth // nil: no SNMPv3 traps
	SMTPAddr    string
	Allow       []netip.Prefix
	Replay      ReplayStore // the v3 replay guard outlives a restart
}

// Listen sets c's trap and mail listeners from l, on their defaults — the
// one way serve and `snmp watch` build them.
func (c *WatcherConfig) Listen(l Listeners) {
	c.Traps, c.Mail = nil, nil
	if l.TrapAddr != "" {
		tc := DefaultTrapListenerConfig(l.TrapAddr, l.Communities...)
		if l.User != nil {
			tc.Users = []V3Auth{*l.User}
		}
		tc.Allow = l.Allow
		tc.Replay = l.Replay
		c.Traps = &tc
	}
	if l.SMTPAddr != "" {
		mc := DefaultMailListenerConfig(l.SMTPAddr)
		mc.Allow = l.Allow
		c.Mail = &mc
	}
}

// DefaultWatcherConfig returns the usual values: a poll a minute with 32
// workers, a sweep of at most 1,024 addresses at 50 a second on port 161.
func DefaultWatcherConfig() WatcherConfig {
	return WatcherConfig{
		Poller: PollerConfig{Workers: 32, Interval: time.Minute, MaxRepetitions: 8, IdentifyEvery: 24 * time.Hour,
			BackoffMax: 30 * time.Minute, RescanEvery: 10},
		Sweep: DefaultSweepOptions(),
	}
}

// Validate names the first bad field.
func (c WatcherConfig) Validate() error {
	switch {
	case c.Rules == nil:
		return errors.New("watch: rules are required")
	case c.Store == nil:
		return errors.New("watch: store is required")
	case c.Poller.Workers < 1:
		return fmt.Errorf("watch: poller workers %d: at least 1", c.Poller.Workers)
	case c.Poller.Interval < time.Second:
		return fmt.Errorf("watch: poller interval %s: at least 1s", c.Poller.Interval)
	case c.Cycles < 0:
		return fmt.Errorf("watch: cycles %d: 0 (until closed) or more", c.Cycles)
	}
	if err := c.Poller.Validate(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	for _, t := range c.Targets {
		if err := t.Validate(); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
	}
	if len(c.Networks) > 0 {
		if c.Sweep.Max < 1 || c.Sweep.Rate < 1 || c.Sweep.Workers < 1 || c.Sweep.Port == 0 {
			return fmt.Errorf("watch: sweep port %d, max %d, rate %d, workers %d: each at least 1",
				c.Sweep.Port, c.Sweep.Max, c.Sweep.Rate, c.Sweep.Workers)
		}
		left := c.Sweep.Max
		for _, p := range c.Networks {
			as, err := ExpandPrefix(p, left)
			if err != nil {
				return fmt.Errorf("watch: networks: %w (all together may hold %d)", err, c.Sweep.Max)
			}
			left -= len(as)
		}
	}
	if len(c.Targets) == 0 && len(c.Networks) == 0 && c.Traps == nil && c.Mail == nil {
		return errors.New("watch: nothing to watch: no targets, networks or listeners")
	}
	return nil
}

// WatchStart says what a watch covers, once polling begins.
type WatchStart struct {
	Devices         []string // polled addresses (host:port)
	NotKyocera      []string // answered the sweep but are not Kyocera: not polled
	TrapListen      string   // bound trap address, "" when off
	TrapCommunities int      // accepted trap communities
	TrapV3Users     []string // SNMPv3 users whose traps are taken
	SMTPListen      string   // bound SMTP address, "" when off
}

// WatchCycle is one poll cycle's figures with the listeners' totals.
type WatchCycle struct {
	Cycle int
	CycleStats
	Traps *TrapStats // totals since Open; nil when off
	Mail  *MailStats // totals since Open; nil when off
}

// ErrNothingToWatch ends a watch whose sweep found no Kyocera device when
// no listener runs either.
var ErrNothingToWatch = errors.New("nothing to watch")

// Watcher is the whole watch over a fleet: the poller, the trap listener
// and the mail listener, all recording through one Recorder. Open binds the
// listeners and starts the sweep and the polling; Close stops everything and
// waits for it. `scanwarden snmp watch` and the daemon share it.
type Watcher struct {
	cfg    WatcherConfig
	log    *slog.Logger
	index  *DeviceIndex
	rec    *Recorder
	poller *Poller
	traps  *TrapListener
	mail   *MailListener

	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}
	err    error // set before done is closed
	cycles atomic.Int64

	names   *resolve.Cache
	namesMu sync.Mutex      // one ResolveNames at a time
	targets []Target        // the polled devices, their names resolved
	failing map[string]bool // devices whose name did not resolve last time (said once)
}

// NewWatcher checks cfg and builds the parts; Open starts them.
func NewWatcher(cfg WatcherConfig) (*Watcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{cfg: cfg, log: log, index: NewDeviceIndex(), done: make(chan struct{}), names: cfg.Names}
	if w.names == nil {
		w.names = resolve.NewCache(nil, 2*time.Second)
	}
	w.rec = NewRecorder(cfg.Store, w.index, cfg.OnEvent, cfg.OnStoreError)
	for _, t := range cfg.Targets {
		w.index.Add(Inventory{Address: t.Addr()})
	}
	var err error
	if w.poller, err = NewPoller(cfg.Poller, cfg.Rules, w.rec, log); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	if cfg.Traps != nil {
		tc := *cfg.Traps
		if tc.DeviceFor == nil {
			tc.DeviceFor = w.trapDevice
		}
		if tc.AllowFrom == nil {
			tc.AllowFrom = w.isDevice
		}
		if w.traps, err = NewTrapListener(tc, cfg.Rules, w.rec, log); err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
	}
	if cfg.Mail != nil {
		mc := *cfg.Mail
		if mc.AllowFrom == nil {
			mc.AllowFrom = w.isDevice
		}
		if w.mail, err = NewMailListener(mc, cfg.Rules, w.rec, log); err != nil {
			return nil, fmt.Errorf("watch: %w", err)
		}
	}
	return w, nil
}

// ListenError is a listener that could not bind; Listener is "traps" or
// "mail", Addr the configured address.
type ListenError struct {
	Listener, Addr string
	Err            error
}

func (e *ListenError) Error() string { return e.Listener + " " + e.Addr + ": " + e.Err.Error() }
func (e *ListenError) Unwrap() error { return e.Err }

// Open binds the listeners (a *ListenError when one cannot) and starts the
// sweep and the polling in the background. It returns at once; Done is
// closed when polling ends by itself (Cycles done, nothing to watch).
func (w *Watcher) Open(ctx context.Context) (err error) {
	if w.cancel != nil {
		return errors.New("watch already open")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		if err != nil {
			cancel()
			w.closeListeners()
		}
	}()
	if w.traps != nil {
		if err := w.traps.Open(ctx); err != nil {
			return &ListenError{Listener: "traps", Addr: w.traps.cfg.Addr, Err: err}
		}
	}
	if w.mail != nil {
		if err := w.mail.Open(ctx); err != nil {
			return &ListenError{Listener: "mail", Addr: w.mail.cfg.Addr, Err: err}
		}
	}
	w.cancel = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		w.err = w.run(ctx)
		close(w.done)
	}()
	return nil
}

// Done is closed when polling has ended: the cycles are done, the sweep
// found nothing to watch, ctx ended or Close was called. Err says why.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err is nil when the cycles are done, ErrNothingToWatch, or the context's
// error; valid once Done is closed.
func (w *Watcher) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Close stops the polling and the listeners and waits for them; nothing
// is recorded after Close returns.
func (w *Watcher) Close() error {
	if w.cancel == nil {
		return nil
	}
	w.cancel()
	w.wg.Wait()
	w.closeListeners()
	w.cancel = nil
	return nil
}

func (w *Watcher) closeListeners() {
	if w.mail != nil {
		w.mail.Close()
	}
	if w.traps != nil {
		w.traps.Close()
	}
}

// SetTargets replaces the polled devices (the daemon's registry changed);
// what is known of devices that stay is kept. Devices given by name are
// resolved (ResolveNames) so that their traps and mail are allowed.
func (w *Watcher) SetTargets(ts []Target) error {
	return w.setTargets(context.Background(), ts)
}

func (w *Watcher) setTargets(ctx context.Context, ts []Target) error {
	for _, t := range ts {
		if err := t.Validate(); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
	}
	if err := w.poller.SetTargets(ts); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	for _, t := range ts {
		w.index.Add(Inventory{Address: t.Addr()})
	}
	w.namesMu.Lock()
	w.targets = append([]Target(nil), ts...)
	w.namesMu.Unlock()
	w.ResolveNames(ctx)
	return nil
}

// ResolveNames looks the names of the devices given by name up again
// (resolve.Cache: two seconds at most each, eight at a time) and takes
// their traps and mail from the addresses found. A name that does not
// resolve now keeps the addresses it last resolved to: a DNS hiccup does
// not refuse a device's traps and mail (a warning says so once). A name
// that never resolved is only polled until it does. The daemon calls it
// every 30 s.
func (w *Watcher) ResolveNames(ctx context.Context) {
	w.namesMu.Lock()
	defer w.namesMu.Unlock()
	var hosts []string
	for _, t := range w.targets {
		if _, ok := resolve.Addr(t.Host); !ok {
			hosts = append(hosts, t.Host)
		}
	}
	res := w.names.Resolve(ctx, hosts)
	named := map[netip.Addr]string{}
	for _, t := range w.targets {
		for _, ip := range res[t.Host].Addrs {
			named[ip] = t.Addr()
		}
	}
	w.index.SetNamed(named)
	failing := map[string]bool{}
	for _, t := range w.targets {
		if r, ok := res[t.Host]; ok {
			w.logName(ctx, t.Addr(), r)
			failing[t.Addr()] = r.Err != nil
		}
	}
	w.failing = failing
}

// logName says when a device's name stops or starts resolving (once, not
// at every ResolveNames); namesMu is held.
func (w *Watcher) logName(ctx context.Context, device string, r resolve.Result) {
	switch {
	case r.Err == nil:
		if w.failing[device] {
			w.log.Info("device name resolves again", "device", device, "addrs", fmt.Sprint(r.Addrs))
		}
	case w.failing[device] || ctx.Err() != nil:
	case r.Stale():
		w.log.Warn("device name does not resolve now: its traps and mail are still taken from the addresses it last resolved to",
			"device", device, "addrs", fmt.Sprint(r.Addrs), "err", r.Err)
	default:
		w.log.Warn("device name does not resolve: its traps and mail are not allowed", "device", device, "err", r.Err)
	}
}

// WatchStats are a watch's totals since Open.
type WatchStats struct {
	Cycles    int
	NewEvents int64 // fresh events from every source
	Traps     *TrapStats
	Mail      *MailStats
}

// Stats returns the totals so far.
func (w *Watcher) Stats() WatchStats {
	st := WatchStats{Cycles: int(w.cycles.Load()), NewEvents: w.rec.Fresh()}
	if w.traps != nil {
		ts := w.traps.Stats()
		st.Traps = &ts
	}
	if w.mail != nil {
		ms := w.mail.Stats()
		st.Mail = &ms
	}
	return st
}

// isDevice says whether a is the address of a watched device: the
// listeners' default allowlist.
func (w *Watcher) isDevice(a netip.Addr) bool {
	_, ok := w.index.ByIP(a)
	return ok
}

// trapDevice names the device a trap comes from: the watched device at
// that IP, else IP:161.
func (w *Watcher) trapDevice(ip netip.Addr) string {
	if dev, ok := w.index.ByIP(ip); ok {
		return dev
	}
	return netip.AddrPortFrom(ip.Unmap(), DefaultPort).String()
}

// run sweeps, then polls until ctx ends or the cycles are done.
func (w *Watcher) run(ctx context.Context) error {
	targets := append([]Target(nil), w.cfg.Targets...)
	var notKyocera []string
	if len(w.cfg.Networks) > 0 {
		found, err := Sweep(ctx, w.cfg.Networks, w.cfg.SweepTarget, w.cfg.Sweep)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("watch: %w", err)
		}
		sort.Slice(found, func(i, j int) bool { return found[i].Address < found[j].Address })
		for _, inv := range found {
			if err := w.rec.Device(ctx, inv); err != nil && ctx.Err() == nil {
				w.log.Error("record device", "device", inv.Address, "err", err)
			}
			if !inv.Kyocera {
				notKyocera = append(notKyocera, inv.Address)
				continue
			}
			host, port, err := ParseHostPort(inv.Address)
			if err != nil {
				continue // Sweep writes host:port
			}
			t := w.cfg.SweepTarget
			t.Host, t.Port = host, port
			targets = append(targets, t)
		}
		if len(targets) == 0 && w.traps == nil && w.mail == nil {
			return fmt.Errorf("%w: no Kyocera answered in %v (%d other SNMP devices)", ErrNothingToWatch, w.cfg.Networks, len(notKyocera))
		}
	}
	if err := w.setTargets(ctx, targets); err != nil {
		return err
	}
	if w.cfg.OnStart != nil {
		st := WatchStart{NotKyocera: notKyocera}
		for _, t := range targets {
			st.Devices = append(st.Devices, t.Addr())
		}
		if w.traps != nil {
			st.TrapListen = w.traps.Addr().String()
			st.TrapCommunities = len(w.cfg.Traps.Communities)
			for _, u := range w.cfg.Traps.Users {
				st.TrapV3Users = append(st.TrapV3Users, u.User)
			}
		}
		if w.mail != nil {
			st.SMTPListen = w.mail.Addr().String()
		}
		w.cfg.OnStart(st)
	}
	return w.poller.Run(ctx, w.cfg.Cycles, func(cs CycleStats) {
		n := w.cycles.Add(1)
		if w.cfg.OnCycle == nil {
			return
		}
		st := w.Stats()
		w.cfg.OnCycle(WatchCycle{Cycle: int(n), CycleStats: cs, Traps: st.Traps, Mail: st.Mail})
	})
}
