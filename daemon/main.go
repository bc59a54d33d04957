// Package daemon is `scanwarden serve`: it builds, opens and closes the
// parts — store, registry, monitor, the SNMP watch loop, notifications,
// metrics, the web site — from one Config, and keeps running when one of
// them fails (the fault is stated: log, status, metric). Wiring only: the
// rules live in monitor, incident and notify.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/internal/loglimit"
	"github.com/scanwarden/scanwarden/internal/webcert"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/notify"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/warning"
	"github.com/scanwarden/scanwarden/web"
)

// Main is the whole daemon. Set Config (LoadConfig), then Run, or Open and
// Close. A test runs it on port 0 with a temporary data dir.
type Main struct {
	Config Config
	// Stderr receives the log (default os.Stderr).
	Stderr io.Writer
	// Getenv reads the environment (default os.Getenv): NOTIFY_SOCKET,
	// WATCHDOG_USEC, the key file variables.
	Getenv func(string) string
	// KeyFile is the sealing key's path ("" : seal.Resolve's choice).
	KeyFile string
	// Drain is how long Close lets running checks finish (default 6 s, so
	// that SIGTERM ends the process within 10 s).
	Drain time.Duration

	log      *slog.Logger
	level    *slog.LevelVar
	st       *store.Store
	faults   *faults
	metrics  *metrics
	sd       *sdNotifier
	ln       net.Listener
	srv      *http.Server
	redirect *http.Server // plain HTTP on the HTTPS port: redirects only
	web      *web.Server
	cert     *webcert.Keeper // the page's certificate; nil: plain HTTP
	webLimit *webLimit       // the web listener's connection caps
	recv     *receiver.Receiver
	recvDir  string
	// The fallback share's allowlist: [receiver] allow, and what was last
	// set (syncReceiverAllow).
	recvAllowMu  sync.Mutex
	recvAllowCfg []netip.Prefix
	recvAllowKey string
	// Device names' last resolved addresses (name + address → IPs).
	recvResolvedMu sync.Mutex
	recvResolved   map[string][]netip.Addr
	// interfaceNets reads the box's networks (nil: localNetworks).
	interfaceNets func() ([]netip.Prefix, error)

	mu       sync.RWMutex
	p        *parts
	reloadMu sync.Mutex // one reload at a time (SIGHUP, the settings page)

	// runCtx is the run context every part is opened under (the watch
	// opened by SyncDevices and the parts a Reload rebuilds too, never a
	// request's context); stop ends it.
	runCtx context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	opened bool
}

// parts are what a reload rebuilds.
type parts struct {
	cfg      Config
	dir      *ad.Directory
	notifier *notify.Notifier
	mon      *monitor.Monitor
	watch    *snmp.Watcher
	targets  string // the watch's device list, to see a change
	rules    *snmp.Rules
}

// Addr is the web listener's address (nil before Open or while its port
// cannot be bound).
func (m *Main) Addr() net.Addr {
	if m.ln == nil {
		return nil
	}
	return m.ln.Addr()
}

// Store is the open store (tests, commands that run beside the daemon).
func (m *Main) Store() *store.Store { return m.st }

// Monitor is the running scheduler.
func (m *Main) Monitor() *monitor.Monitor {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.p == nil {
		return nil
	}
	return m.p.mon
}

// Faults lists the parts that do not work now.
func (m *Main) Faults() []Fault { return m.faults.list() }

func (m *Main) getenv(k string) string {
	if m.Getenv != nil {
		return m.Getenv(k)
	}
	return os.Getenv(k)
}

// dataDir is cfg's data_dir, else store.DataDir's choice for serve (made
// when missing: ./scanwarden-data).
func (m *Main) dataDir(cfg Config) (string, error) {
	d, err := store.DataDir(cfg.DataDir, m.getenv, store.Local)
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
			m.Reload(ctx)
		}
	}
}

// Open starts everything. Only what makes running pointless is an error:
// a data dir that cannot be opened or whose key is wrong. Every other part
// that fails is a fault and the rest runs.
func (m *Main) Open(ctx context.Context) error {
	if m.opened {
		return errors.New("daemon already open")
	}
	cfg := m.Config
	if cfg.Listen == "" {
		def := Defaults()
		def.File = cfg.File
		cfg = def
		if err := cfg.finish("", nil); err != nil {
			return err
		}
	}
	if m.Stderr == nil {
		m.Stderr = os.Stderr
	}
	if m.Drain <= 0 {
		m.Drain = 6 * time.Second
	}
	m.level = new(slog.LevelVar)
	m.level.Set(logLevel(cfg.LogLevel))
	m.log = slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: m.level}))
	m.faults = newFaults(time.Now)
	m.sd = newSDNotifier(m.getenv)

	dataDir, err := m.dataDir(cfg)
	if err != nil {
		return err
	}
	cfg.DataDir = dataDir
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("data_dir %s: %w", dataDir, err)
	}
	m.cert = nil
	if cfg.WebTLS() {
		if m.cert, err = m.openCert(cfg, dataDir); err != nil {
			return err
		}
	}
	st, err := store.OpenDir(ctx, dataDir)
	if err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	keyPath := store.KeyFile(m.KeyFile, m.getenv, dataDir)
	if _, err := st.UnlockKey(ctx, keyPath); err != nil {
		st.Close()
		return err
	}
	m.st = st
	if c, err := m.overlay(ctx, cfg); err != nil {
		m.faults.set("settings", "settings stored from the web page not used: "+err.Error())
		m.log.Error("stored settings not used", "err", err)
	} else {
		cfg = c
	}
	m.metrics = newMetrics(st, m.faults, m.Monitor, m.devicesUp)
	m.webLimit = &webLimit{log: loglimit.New(m.log.With("component", "http"), 10*time.Second)}
	m.metrics.reg.MustRegister(&receiverCollector{m}, m.webLimit)
	m.seedMetrics(ctx)

	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.runCtx, m.stop = runCtx, stop
	m.opened = true

	m.openReceiver(runCtx, cfg)
	p := m.openParts(runCtx, cfg)
	m.mu.Lock()
	m.p = p
	m.mu.Unlock()

	h, err := m.openWeb(ctx)
	if err != nil {
		m.Close()
		return fmt.Errorf("web: %w", err)
	}
	errLog := slog.NewLogLogger(m.log.With("component", "http").Handler(), slog.LevelWarn)
	m.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: errLog}
	if m.cert != nil {
		m.srv.TLSConfig = m.cert.TLSConfig()
		m.redirect = &http.Server{Handler: http.HandlerFunc(toHTTPS), ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout: 10 * time.Second, ErrorLog: errLog}
	}
	if err := m.listen(cfg.Listen); err != nil {
		m.faults.set("web", fmt.Sprintf("listen %s: %v (retrying every 10 s)", cfg.Listen, err))
		m.log.Error("web listener", "addr", cfg.Listen, "err", err)
		m.wg.Add(1)
		go m.retryListen(runCtx, cfg.Listen)
	}
	m.wg.Add(2)
	go m.background(runCtx)
	go m.syncReceiverAllowLoop(runCtx)
	m.announceSetup(ctx, cfg)

	m.log.Info("scanwarden serve started", "data_dir", dataDir, "listen", m.Addr(), "config", cfg.File)
	m.sd.Send("READY=1", "STATUS="+m.status())
	return nil
}

// announceSetup writes the one-time setup link (no admin password yet) to
// the data dir's setup-link file and says where it is: the link is a
// secret and the log is read by more people than root.
func (m *Main) announceSetup(ctx context.Context, cfg Config) {
	link, err := m.web.SetupLink(ctx)
	if err != nil {
		m.log.Error("admin setup link", "err", err)
		return
	}
	if link == "" {
		RemoveSetupLink(cfg.DataDir)
		return
	}
	var listen net.Addr = &net.TCPAddr{}
	if a := m.Addr(); a != nil {
		listen = a
	} else if ap, err := netip.ParseAddrPort(cfg.Listen); err == nil {
		listen = net.TCPAddrFromAddrPort(ap)
	}
	scheme := "http"
	var cert *webcert.Cert
	if m.cert != nil {
		scheme, cert = "https", m.cert.Current()
	}
	urls := pageURLs(scheme, listen)
	file, err := writeSetupLink(cfg.DataDir, urls, link, cert, time.Now().Add(24*time.Hour))
	if err != nil {
		m.log.Error("admin setup link", "err", err)
		return
	}
	fp := ""
	if cert != nil {
		fp = fmt.Sprintf(" The page's certificate is self-signed: its SHA-256 fingerprint is %s — compare it with the browser's.", cert.Fingerprint())
		if !cert.SelfSigned {
			fp = fmt.Sprintf(" The page's certificate (%s) has the SHA-256 fingerprint %s.", cert.CertFile, cert.Fingerprint())
		}
	}
	fmt.Fprintf(m.Stderr, "No admin password yet. The page is at %s. The one-time setup link (valid 24 h) is in %s, "+
		"readable by root and the daemon's user only: run `sudo scanwarden admin setup-link --data-dir %s` to print it "+
		"(or set the password with `scanwarden admin set-password`).%s\n", strings.Join(urls, " "), file, cfg.DataDir, fp)
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

func (m *Main) status() string {
	n := len(m.faults.list())
	if n == 0 {
		return "running"
	}
	return fmt.Sprintf("running with %d fault(s)", n)
}

func (m *Main) listen(addr string) error {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var ln net.Listener = m.webLimit.wrap(tcp, m.cert != nil)
	if m.cert != nil {
		// One port: TLS handshakes to the site, plain HTTP to a redirect.
		split := splitTLS(ln)
		ln = tls.NewListener(split.tls, m.srv.TLSConfig)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.redirect.Serve(split.plain)
		}()
	}
	m.ln = ln
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.faults.set("web", err.Error())
			m.log.Error("web server", "err", err)
		}
	}()
	return nil
}

func (m *Main) retryListen(ctx context.Context, addr string) {
	defer m.wg.Done()
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := m.listen(addr); err == nil {
				m.faults.clear("web")
				m.log.Info("web listener bound", "addr", m.Addr())
				return
			}
		}
	}
}

// background keeps the watch's device list in step with the registry and
// pets systemd's watchdog. (The fallback share's allowlist follows the
// registry on a goroutine of its own: syncReceiverAllowLoop.)
func (m *Main) background(ctx context.Context) {
	defer m.wg.Done()
	wd, err := watchdogInterval(m.getenv)
	if err != nil {
		m.log.Warn("systemd watchdog", "err", err)
	}
	var wdC <-chan time.Time
	if wd > 0 {
		t := time.NewTicker(wd)
		defer t.Stop()
		wdC = t.C
	}
	devTick := time.NewTicker(30 * time.Second)
	defer devTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wdC:
			m.sd.Send("WATCHDOG=1", "STATUS="+m.status())
		case <-devTick.C:
			m.syncDevices(ctx)
		}
	}
}

// SyncDevices re-reads the registry's devices now (after an import) and
// makes the monitor re-read the destinations. ctx bounds the reading only:
// a watch it opens runs under the run context, not the caller's (a web
// request's ends with its answer).
func (m *Main) SyncDevices(ctx context.Context) {
	m.syncDevices(ctx)
	m.syncReceiverAllow(ctx)
	if mon := m.Monitor(); mon != nil {
		mon.Reload()
	}
}

func (m *Main) syncDevices(ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.p == nil {
		return
	}
	targets, key, err := m.watchTargets(ctx, m.p.cfg)
	if err != nil {
		m.faults.set("store", err.Error())
		return
	}
	if key == m.p.targets {
		return
	}
	m.p.targets = key
	if m.p.watch != nil {
		if err := m.p.watch.SetTargets(targets); err != nil {
			m.faults.set("snmp", err.Error())
		}
		return
	}
	m.p.watch = m.openWatch(m.runCtx, m.p.cfg, m.p.rules, targets)
}

// Reload re-reads the config file: a bad file keeps the running config
// (the error is logged and stated as the "config" fault); a good one
// rebuilds the parts. data_dir and listen need a restart.
func (m *Main) Reload(ctx context.Context) error {
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	m.mu.RLock()
	if m.p == nil {
		m.mu.RUnlock()
		return errors.New("not running")
	}
	old := m.p.cfg
	m.mu.RUnlock()
	cfg, err := LoadConfig(old.File)
	if err != nil {
		m.faults.set("config", "reload refused, running config kept: "+err.Error())
		m.log.Error("config reload refused; the running config is kept", "err", err)
		return err
	}
	m.faults.clear("config")
	m.faults.clear("settings")
	if c, err := m.overlay(ctx, cfg); err != nil {
		m.faults.set("settings", "settings stored from the web page not used: "+err.Error())
		m.log.Error("stored settings not used", "err", err)
	} else {
		cfg = c
	}
	if d, err := m.dataDir(cfg); err == nil {
		cfg.DataDir = d
	}
	if cfg.DataDir != old.DataDir || cfg.Listen != old.Listen {
		m.log.Warn("data_dir and listen change only at restart", "data_dir", old.DataDir, "listen", old.Listen)
		cfg.DataDir, cfg.Listen = old.DataDir, old.Listen
	}
	m.level.Set(logLevel(cfg.LogLevel))
	// The old parts close without m.mu held: the watch's last events and
	// the checks still draining call back into Main (Monitor()), which
	// takes m.mu. Meanwhile events are stored but not routed.
	m.mu.Lock()
	oldParts := m.p
	m.p = nil
	m.mu.Unlock()
	m.closeParts(oldParts)
	p := m.openParts(m.runCtx, cfg)
	m.mu.Lock()
	m.p = p
	m.mu.Unlock()
	m.log.Info("config reloaded", "file", cfg.File)
	m.sd.Send("STATUS=" + m.status())
	return nil
}

// openParts builds directory, notifier, monitor and watch from cfg; a part
// that fails is a fault, never an error.
func (m *Main) openParts(ctx context.Context, cfg Config) *parts {
	p := &parts{cfg: cfg}
	for _, part := range []string{"ad", "snmp", "snmp.traps", "snmp.mail", "snmp.rules", "notify.webhook", "notify.mail", "monitor"} {
		m.faults.clear(part)
	}
	book := snmp.DefaultCodeBook()
	p.rules = snmp.DefaultRules(book)
	if cfg.SNMP.RulesFile != "" {
		if f, err := os.Open(cfg.SNMP.RulesFile); err != nil {
			m.faults.set("snmp.rules", err.Error())
		} else {
			r, err := snmp.ParseRules(f, book, nil)
			f.Close()
			if err != nil {
				m.faults.set("snmp.rules", "default rules used: "+err.Error())
			} else {
				p.rules = r
			}
		}
	}

	opts := smbcheck.Options{MaxFailures: cfg.Checks.MaxFailures, Window: cfg.Checks.FailureWindow.D(), Ledger: m.st.Ledger(),
		StepTimeout: cfg.Checks.Timeout.D(), NoWrite: cfg.Checks.NoWrite, Logger: m.log.With("component", "check")}
	if cfg.AD.URL != "" {
		d, err := ad.New(ad.Config{URL: cfg.AD.URL, BindUser: cfg.AD.BindUser, Password: cfg.AD.Password, CAFile: cfg.AD.CA,
			AllowPlain: cfg.AD.InsecurePlain, Timeout: cfg.AD.Timeout.D(), Margin: cfg.AD.Margin})
		if err != nil {
			m.faults.set("ad", err.Error())
			m.log.Error("Active Directory not used", "err", err)
		} else {
			p.dir = d
			opts.Directory = d
			if dom := d.DNSDomain(); dom != "" {
				opts.DNSDomains = []string{dom}
				opts.Realm = dom
			}
			if h := d.KDCHost(); h != "" {
				opts.KDCs = []string{h}
			}
		}
	}

	senders, errs := Senders(cfg)
	for ch, err := range errs {
		m.faults.set("notify."+ch, err.Error())
	}
	p.notifier = notify.New(senders...)
	in := &incidentNotifier{n: p.notifier, st: m.st, metrics: m.metrics, faults: m.faults, log: m.log.With("component", "notify"), now: time.Now}

	mon, err := monitor.New(monitor.Config{Interval: cfg.Checks.Interval.D(), Jitter: cfg.Checks.Jitter.D(),
		MaxConcurrent: cfg.Checks.MaxConcurrent, CloseAfter: cfg.Incidents.CloseAfter.D(), EventGap: cfg.Checks.EventGap.D(),
		OnCheck: m.onCheck, OnFault: m.partFault, Log: m.log, Sweeps: eventSweeps{m.st},
		Warnings: &warning.Tracker{Thresholds: cfg.Warnings.Thresholds(), Store: m.st, Notifies: true}, WarningNotifier: in}, newFleet(m.st), checker{opts}, reports{m.st}, m.st, in)
	if err == nil {
		err = mon.Open(ctx)
	}
	if err != nil {
		m.faults.set("monitor", err.Error())
		m.log.Error("monitor not running", "err", err)
	} else {
		p.mon = mon
	}

	targets, key, err := m.watchTargets(ctx, cfg)
	if err != nil {
		m.faults.set("store", err.Error())
	}
	p.targets = key
	p.watch = m.openWatch(ctx, cfg, p.rules, targets)
	return p
}

// Senders builds the notification channels the config turns on; a
// channel that cannot be built is in errs under its name (webhook, mail).
func Senders(cfg Config) (senders []notify.Sender, errs map[string]error) {
	errs = map[string]error{}
	n := cfg.Notify
	if n.WebhookURL != "" {
		w, err := notify.NewWebhook(notify.WebhookConfig{URL: n.WebhookURL, Secret: n.WebhookSecret, SecretHeader: n.WebhookSecretHeader,
			Attempts: n.WebhookAttempts, Backoff: n.WebhookBackoff.D(), MaxBackoff: 5 * time.Minute, Timeout: 10 * time.Second})
		if err != nil {
			errs["webhook"] = err
		} else {
			senders = append(senders, w)
		}
	}
	if n.SMTPHost != "" {
		ml, err := notify.NewMail(notify.MailConfig{Host: n.SMTPHost, Port: n.SMTPPort, TLS: n.SMTPTLS, User: n.SMTPUser,
			Password: n.SMTPPassword, From: n.SMTPFrom, To: n.MailTo, Timeout: 30 * time.Second})
		if err != nil {
			errs["mail"] = err
		} else {
			senders = append(senders, ml)
		}
	}
	return senders, errs
}

// DeviceTarget is the SNMP target of a registry device with an address: its
// version and credentials, the config's community when it has none. The
// error is the address's; the target is not validated.
func DeviceTarget(d registry.Device, cfg Config) (snmp.Target, error) {
	host, port, err := snmp.ParseHostPort(d.Address)
	if err != nil {
		return snmp.Target{}, err
	}
	t := snmp.Target{Host: host, Port: port, Version: snmp.V2c, Community: cfg.SNMP.Community,
		Timeout: snmp.DefaultTimeout, Retries: snmp.DefaultRetries}
	switch d.SNMP.Version {
	case "1":
		t.Version = snmp.V1
	case "3":
		t.Version = snmp.V3
		t.V3 = &snmp.V3Auth{User: d.SNMP.V3User, AuthProto: d.SNMP.V3AuthProto, AuthPass: d.SNMP.V3Auth,
			PrivProto: d.SNMP.V3PrivProto, PrivPass: d.SNMP.V3Priv}
	}
	if !d.SNMP.Community.IsZero() {
		t.Community = d.SNMP.Community
	}
	return t, nil
}

// watchTargets are the registry's devices that have an SNMP address, with
// their credentials (the config's community when a device has none).
func (m *Main) watchTargets(ctx context.Context, cfg Config) ([]snmp.Target, string, error) {
	devs, err := m.st.Devices(ctx)
	if err != nil {
		return nil, "", err
	}
	var ts []snmp.Target
	var keys []string
	for _, d := range devs {
		if d.Address == "" {
			continue
		}
		t, err := DeviceTarget(d, cfg)
		if err != nil {
			m.log.Warn("device address not polled", "device", d.Name, "err", err)
			continue
		}
		if err := t.Validate(); err != nil {
			m.log.Warn("device not polled", "device", d.Name, "err", err)
			continue
		}
		ts = append(ts, t)
		keys = append(keys, t.Addr()+"/"+string(t.Version)+"/"+d.SNMP.V3User)
	}
	return ts, strings.Join(keys, ","), nil
}

// openWatch starts the SNMP watch loop (nil when there is nothing to
// watch yet). A listener that cannot bind is a fault; the watch then runs
// without it.
func (m *Main) openWatch(ctx context.Context, cfg Config, rules *snmp.Rules, targets []snmp.Target) *snmp.Watcher {
	wc := snmp.DefaultWatcherConfig()
	wc.Targets = targets
	wc.Poller.Interval = cfg.SNMP.Interval.D()
	wc.SweepTarget = snmp.Target{Version: snmp.V2c, Community: cfg.SNMP.Community, Timeout: snmp.DefaultTimeout, Retries: snmp.DefaultRetries}
	for _, c := range cfg.SNMP.CIDR {
		if p, err := netip.ParsePrefix(strings.TrimSpace(c)); err == nil {
			wc.Networks = append(wc.Networks, p)
		}
	}
	var allow []netip.Prefix
	for _, c := range cfg.SNMP.Allow {
		if p, err := netip.ParsePrefix(strings.TrimSpace(c)); err == nil {
			allow = append(allow, p.Masked())
		}
	}
	if cfg.SNMP.TrapListen != "" {
		var comms []scanwarden.Secret
		if !cfg.SNMP.TrapCommunity.IsZero() {
			comms = append(comms, cfg.SNMP.TrapCommunity)
		}
		tc := snmp.DefaultTrapListenerConfig(cfg.SNMP.TrapListen, comms...)
		if u := cfg.SNMP.TrapV3(); u != nil {
			tc.Users = []snmp.V3Auth{*u}
		}
		tc.Allow = allow
		tc.Replay = m.st // the v3 replay guard outlives a restart
		wc.Traps = &tc
	}
	if cfg.SNMP.SMTPListen != "" {
		mc := snmp.DefaultMailListenerConfig(cfg.SNMP.SMTPListen)
		mc.Allow = allow
		wc.Mail = &mc
	}
	wc.Rules = rules
	wc.Sink = &eventSink{next: m.st.SNMP(store.DefaultDedupWindow), faults: m.faults, events: m.event}
	wc.Log = m.log.With("component", "snmp")
	wc.OnCycle = m.metrics.cycle
	for attempt := 0; attempt < 3; attempt++ {
		if len(wc.Targets) == 0 && len(wc.Networks) == 0 && wc.Traps == nil && wc.Mail == nil {
			return nil
		}
		w, err := snmp.NewWatcher(wc)
		if err == nil {
			err = w.Open(ctx)
		}
		if err == nil {
			m.faults.clear("snmp")
			return w
		}
		var le *snmp.ListenError
		switch {
		case errors.As(err, &le) && le.Listener == "traps":
			m.faults.set("snmp.traps", err.Error())
			m.log.Error("SNMP trap listener not running", "err", err)
			wc.Traps = nil
		case errors.As(err, &le):
			m.faults.set("snmp.mail", err.Error())
			m.log.Error("SMTP listener for device mail not running", "err", err)
			wc.Mail = nil
		default:
			m.faults.set("snmp", err.Error())
			m.log.Error("SNMP watch not running", "err", err)
			return nil
		}
	}
	return nil
}

// partFault states (err set) or clears a part's fault.
func (m *Main) partFault(part string, err error) {
	if err != nil {
		m.faults.set(part, err.Error())
		return
	}
	m.faults.clear(part)
}

// onCheck records a finished check in the metrics; a green one lets the
// receiver deliver what it holds for that destination now. A check whose
// ad step could not ask the directory states the "ad" fault (the DC down,
// its name not resolving); one that could clears it.
func (m *Main) onCheck(d monitor.Destination, rep smbcheck.Report, took time.Duration, reason string) {
	m.metrics.observe(d, rep, took, reason)
	if s := rep.Step(smbcheck.StepAD); s != nil && s.Status != smbcheck.StatusSkipped {
		if e, ok := s.Evidence["error"]; ok {
			m.faults.set("ad", fmt.Sprintf("Active Directory could not be asked: %v", e))
		} else {
			m.faults.clear("ad")
		}
	}
	if rep.OK() && m.recv != nil {
		m.recv.Kick(d.Name)
	}
}

// event hands a fresh send failure to the monitor.
func (m *Main) event(ctx context.Context, ev snmp.Event) {
	m.log.Info("send failure", "device", ev.Device, "code", ev.Code, "source", ev.Source, "destination_text", ev.Destination)
	if mon := m.Monitor(); mon != nil {
		mon.Event(ctx, ev)
	}
}

func (m *Main) closeParts(p *parts) {
	if p == nil {
		return
	}
	if p.watch != nil {
		p.watch.Close()
	}
	if p.mon != nil {
		p.mon.Shutdown(m.Drain)
	}
	if p.dir != nil {
		p.dir.Close()
	}
}

// Close stops the daemon: systemd hears STOPPING, the web server stops
// taking requests, the watch stops, running checks get Drain to finish
// (then are cancelled), and the store closes. It returns within ~10 s.
func (m *Main) Close() error {
	if !m.opened {
		return nil
	}
	m.opened = false
	m.sd.Send("STOPPING=1")
	m.log.Info("stopping")
	if m.srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m.srv.Shutdown(sctx) // first: its listener's close ends the redirect's too
		if m.redirect != nil {
			m.redirect.Shutdown(sctx)
		}
		cancel()
	}
	if m.web != nil {
		m.web.Close()
	}
	m.mu.Lock()
	old := m.p
	m.p = nil
	m.mu.Unlock()
	m.closeParts(old) // without m.mu: see Reload
	if m.recv != nil {
		if err := m.recv.Close(); err != nil {
			m.log.Warn("receiver close", "err", err)
		}
	}
	m.stop()
	m.wg.Wait()
	err := m.st.Close()
	m.log.Info("stopped")
	return err
}

// devicesUp says, per registered device with an address, whether it
// answered SNMP within two poll intervals (metrics).
func (m *Main) devicesUp(ctx context.Context) map[string]bool {
	devs, err := m.st.Devices(ctx)
	if err != nil {
		return nil
	}
	inv, err := m.st.SNMPDevices(ctx)
	if err != nil {
		return nil
	}
	seen := map[string]time.Time{}
	for _, i := range inv {
		seen[registry.Address(i.Address).SNMPAddr()] = i.SeenAt
	}
	m.mu.RLock()
	interval := time.Minute
	if m.p != nil {
		interval = m.p.cfg.SNMP.Interval.D()
	}
	m.mu.RUnlock()
	out := map[string]bool{}
	for _, d := range devs {
		if d.Address == "" {
			continue
		}
		out[d.Name] = registry.Reachable(seen[d.SNMPAddr()], interval)
	}
	return out
}

// seedMetrics loads each destination's last verdict.
func (m *Main) seedMetrics(ctx context.Context) {
	ds, err := m.st.Destinations(ctx, "")
	if err != nil {
		return
	}
	for _, d := range ds {
		r, ok, err := m.st.LatestReport(ctx, d.Name)
		if err != nil || !ok {
			continue
		}
		m.metrics.setVerdict(d.Name, d.Device, r.Report.Verdict, r.At)
	}
}

// openWeb builds the site (package web: pages, API, /healthz, /metrics
// behind its auth, /debug/pprof) over the daemon's backends.
func (m *Main) openWeb(ctx context.Context) (http.Handler, error) {
	b := webBackend{m}
	wc := web.Config{Auth: m.st, Fleet: b, Checker: b, Incidents: b, Events: b, Status: b, Summary: b, CheckAll: b, Editor: b, Warnings: b,
		Importer: webImporter{m}, Settings: settingsBackend{m},
		Receiver: webReceiver{m.st, filepath.Join(filepath.Dir(m.st.Path()), "receiver")},
		Metrics:  m.metrics.Handler(), Logger: m.log.With("component", "web"), TLS: m.cert != nil, Authenticated: m.webLimit.trust,
		SetupDone: func() { RemoveSetupLink(filepath.Dir(m.st.Path())) }}
	if m.recv != nil {
		wc.Receiver = receiverBackend{m} // the running receiver: deliver and force too
	}
	ws, err := web.New(wc)
	if err != nil {
		return nil, err
	}
	m.web = ws
	return ws.Handler(), nil
}
