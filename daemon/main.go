// Package daemon is `scanwarden serve`: it builds, opens and closes the
// parts — store, registry, monitor, the SNMP watch loop, notifications,
// metrics, the fallback share, the web site — from one Config, and keeps
// running when one of them fails (the fault is stated: log, status,
// metric). Wiring only: the rules live in monitor, incident, notify and
// receiver. Every part is opened under the one run context Main holds and
// owns its own lock and state.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/loglimit"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/resolve"
	"github.com/scanwarden/scanwarden/store"
)

// Main is the whole daemon. Set Config (config.Load), then Run, or Open and
// Close. A test runs it on port 0 with a temporary data dir.
type Main struct {
	// Config is what Open starts with; nil: the defaults (config.Load("")),
	// which Open then sets here.
	Config *config.Config
	// Stderr receives the log (default os.Stderr).
	Stderr io.Writer
	// Getenv reads the environment (default os.Getenv): NOTIFY_SOCKET,
	// WATCHDOG_USEC, the key file variables.
	Getenv func(string) string
	// KeyFile is the sealing key's path ("" : seal.Resolve's choice).
	KeyFile string
	// Drain is how long Close lets running checks finish (default 6 s, so
	// that SIGTERM ends the process within 10 s): the one shutdown deadline.
	Drain time.Duration

	env                   // store, faults, log, metrics: what every part is built with
	level  *slog.LevelVar // the log's, set again by a reload
	sd     *sdNotifier
	web    *webPart
	recv   *receiverPart // nil: [receiver] off or not running
	lock   *dataLock     // the data dir's: one serve per data dir
	live   liveParts     // what a reload rebuilds
	runCtx context.Context
	stop   context.CancelFunc // ends runCtx
	wg     sync.WaitGroup     // the device sync and the watchdog
	// localNets reads the box's networks for the share's allowlist (nil:
	// samba.LocalNetworks; a test's fake).
	localNets func() samba.LocalNets
}

// Store is the open store (tests, commands that run beside the daemon).
func (m *Main) Store() *store.Store { return m.st }

// Monitor is the running scheduler (nil while a reload rebuilds it, or
// when it could not start).
func (m *Main) Monitor() *monitor.Monitor {
	if p := m.live.get(); p != nil && p.checks != nil {
		return p.checks.mon
	}
	return nil
}

// Faults lists the parts that do not work now.
func (m *Main) Faults() []scanwarden.Fault { return m.faults.list() }

// dataDir is cfg's data_dir, else store.DataDir's choice for serve (made
// when missing: ./scanwarden-data).
func dataDir(cfg config.Config, getenv func(string) string) (string, error) {
	d, err := store.DataDir(cfg.DataDir, getenv, store.Local)
	if err != nil {
		return "", fmt.Errorf("data_dir: %w", err)
	}
	return filepath.Clean(d), nil
}

// Run opens the daemon, reloads the config on SIGHUP, and closes it when
// ctx ends (SIGTERM, SIGINT in cmd). The error is "could not start".
func (m *Main) Run(ctx context.Context) error {
	if err := m.Open(ctx); err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return m.Close()
		case <-hup:
			m.Reload()
		}
	}
}

// Open starts everything. Only what makes running pointless is an error:
// a data dir that cannot be opened, whose key is wrong or that another
// serve holds (*HeldError), a listener that cannot bind (*BindError: the
// page's, and the trap and mail listeners when configured). Every other
// part that fails is a fault and the rest runs.
func (m *Main) Open(ctx context.Context) error {
	if m.runCtx != nil {
		return errors.New("daemon already open")
	}
	cfg, err := m.start()
	if err != nil {
		return err
	}
	if err := m.openData(ctx, &cfg); err != nil {
		m.lock.Close()
		return err
	}
	cfg = storedSettings{m.env}.apply(ctx, cfg)
	m.metrics = newMetrics(m.st, m.faults, m.Monitor, func(ctx context.Context) map[string]bool {
		return devicesUp(ctx, m.st, m.snmpInterval())
	})
	m.metrics.reg.MustRegister(&receiverCollector{m}, &bridgeCollector{m}, m.web.limit)
	m.metrics.seed(ctx, m.st)

	// The parts outlive Open's ctx: they end with Close.
	m.runCtx, m.stop = context.WithCancel(context.WithoutCancel(ctx))
	m.openReceiver(cfg)
	parts := m.openParts(cfg, resolve.NewCache(m.resolver, deviceNameTimeout))
	m.live.swap(parts)
	if err := parts.watch.listenErr; err != nil {
		m.Close()
		return err
	}
	if err := m.openWeb(cfg); err != nil {
		m.Close()
		var be *BindError
		if errors.As(err, &be) {
			return err
		}
		return fmt.Errorf("web: %w", err)
	}
	if err := m.lock.announce(m.Addr().String()); err != nil {
		m.log.Warn("data_dir lock: listen address not written", "err", err)
	}
	m.wg.Add(2)
	go m.syncDevicesLoop()
	wd := newWatchdog(m.env, m.sd, m.Getenv)
	go func() {
		defer m.wg.Done()
		wd.run(m.runCtx)
	}()
	m.web.announceSetup(ctx, m.Stderr, cfg)

	m.log.Info("scanwarden serve started", "data_dir", cfg.DataDir, "listen", m.Addr(), "config", cfg.File)
	m.sd.Send("READY=1", "STATUS="+m.faults.status())
	return nil
}

// start is the config to open with (the defaults when none was set) and
// the log, fault list and systemd notifier.
func (m *Main) start() (config.Config, error) {
	if m.Config == nil {
		c, err := config.Load("")
		if err != nil {
			return c, err
		}
		m.Config = &c
	}
	cfg := *m.Config
	if m.Stderr == nil {
		m.Stderr = os.Stderr
	}
	if m.Getenv == nil {
		m.Getenv = os.Getenv
	}
	if m.Drain <= 0 {
		m.Drain = 6 * time.Second
	}
	m.level = new(slog.LevelVar)
	m.level.Set(logLevel(cfg.LogLevel))
	m.log = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: m.level}))
	m.faults = newFaults(time.Now)
	m.sd = newSDNotifier(m.Getenv)
	return cfg, nil
}

// openData makes the data dir, reads the web certificate, opens the store
// and unlocks its key.
func (m *Main) openData(ctx context.Context, cfg *config.Config) error {
	dataDir, err := dataDir(*cfg, m.Getenv)
	if err != nil {
		return err
	}
	cfg.DataDir = dataDir
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("data_dir %s: %w", dataDir, err)
	}
	if m.lock, err = lockDataDir(dataDir); err != nil {
		return err
	}
	m.web = &webPart{log: m.log.With("component", "web"), faults: m.faults,
		limit: &webLimit{log: loglimit.New(m.log.With("component", "http"), 10*time.Second)}}
	if cfg.WebTLS() {
		if m.web.cert, err = openCert(m.web.log, *cfg, dataDir); err != nil {
			return err
		}
	}
	st, err := store.OpenUnlocked(ctx, dataDir, m.KeyFile, m.Getenv)
	if err != nil {
		return err // it names the store's file or the key's
	}
	st.AllowLinkLocal(cfg.AllowLinkLocal)
	m.st = st
	return nil
}

// openReceiver runs the fallback share when [receiver] enabled is set; one
// that cannot start is the "receiver" fault.
func (m *Main) openReceiver(cfg config.Config) {
	if !cfg.Receiver.Enabled {
		return
	}
	// A device's learned client re-reads the schedule profileReloadDelay
	// after it changed, once for all the changes meanwhile (one logon
	// shows several values; a client that changes at every logon, or
	// someone at its address, gets at most one re-read per delay).
	var pending atomic.Bool
	p := &receiverPart{env: m.env, localNets: m.localNets, names: resolve.NewCache(m.resolver, deviceNameTimeout),
		profileChanged: func() {
			if pending.Swap(true) {
				return
			}
			time.AfterFunc(profileReloadDelay, func() {
				pending.Store(false)
				if m.runCtx.Err() != nil {
					return
				}
				if mon := m.Monitor(); mon != nil {
					mon.Reload()
				}
			})
		}}
	if err := p.Open(m.runCtx, cfg, m.delivery); err != nil {
		m.faults.set("receiver", err.Error())
		m.log.Error("receiver not running", "err", err)
		return
	}
	m.recv = p
}

// profileReloadDelay is how long after a device's learned SMB client
// changed the schedule is re-read (its destinations checked as it).
const profileReloadDelay = 3 * time.Second

// deviceNameTimeout bounds each lookup of a device's name.
const deviceNameTimeout = 2 * time.Second

// openParts opens what a reload rebuilds, under the run context; a part
// that fails is a fault, never an error. names are the watched devices'
// last good addresses, kept across reloads.
func (m *Main) openParts(cfg config.Config, names *resolve.Cache) *parts {
	checks := &checksPart{env: m.env, onCheck: m.onCheck, onFault: m.faults.from, share: m.recv.shareHealth}
	checks.Open(m.runCtx, cfg)
	watch := &watchPart{env: m.env, cfg: cfg, event: m.event, names: names}
	watch.Open(m.runCtx)
	return &parts{cfg: cfg, checks: checks, watch: watch}
}

func (p *parts) close(drain time.Duration) {
	if p == nil {
		return
	}
	p.watch.Close()
	p.checks.Close(drain)
}

// Close stops the daemon within Drain: systemd hears STOPPING, the web
// server stops taking requests, the watch stops, running checks get what
// is left of Drain to finish (then are cancelled), the share's loop stops
// and the store closes.
func (m *Main) Close() error {
	if m.runCtx == nil || m.runCtx.Err() != nil {
		return nil
	}
	deadline := time.Now().Add(m.Drain)
	m.sd.Send("STOPPING=1")
	m.log.Info("stopping")
	m.web.Close(deadline)
	m.live.swap(nil).close(time.Until(deadline))
	if m.recv != nil {
		if err := m.recv.Close(); err != nil {
			m.log.Warn("receiver close", "err", err)
		}
	}
	m.stop()
	m.wg.Wait()
	err := m.st.Close()
	m.lock.Close()
	m.log.Info("stopped")
	return err
}

func logLevel(s string) slog.Level {
	switch s {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
