package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/notify"
	"github.com/scanwarden/scanwarden/resolve"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/warning"
)

// env is what every part is built with.
type env struct {
	st      *store.Store
	faults  *faults
	log     *slog.Logger
	metrics *metrics
	// resolver looks the devices' names up for the watch and the share
	// (nil: the system's; a test's fake).
	resolver resolve.Resolver
}

// parts are what a reload rebuilds: the checks (directory, notifier,
// monitor) and the SNMP watch, with the config they were built from.
type parts struct {
	cfg    config.Config
	checks *checksPart
	watch  *watchPart
}

// liveParts holds the running parts: one reload at a time, readers get
// the current set.
type liveParts struct {
	reload sync.Mutex // SIGHUP, the settings page
	mu     sync.RWMutex
	p      *parts
}

func (l *liveParts) get() *parts {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.p
}

func (l *liveParts) swap(p *parts) (old *parts) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old, l.p = l.p, p
	return old
}

// onCheck records a finished check in the metrics; one where scanwarden's
// own client — the deliveries' — is green (ownGreen) lets the receiver
// deliver what it holds for that destination now. A check whose
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
	if ownGreen(rep) && m.recv != nil {
		m.recv.Kick(d.Name)
	}
}

// ownGreen reports whether rep finds the real folder working for
// scanwarden's own client, the one deliveries use: a passing check, or
// the own client's verdict behind a device's that failed on a cause of
// its client (the bridge's offer) or behind a bridge that fails for
// another reason (a scan stuck). A destination its MFP cannot reach still
// gets its held scans delivered as soon as scanwarden can.
func ownGreen(rep smbcheck.Report) bool {
	if rep.OK() {
		return true
	}
	own := OwnVerdict(rep)
	return own != nil && own.Cause == scanwarden.CauseOK
}

// event hands a fresh send failure to the monitor.
func (m *Main) event(ctx context.Context, ev snmp.Event) {
	m.log.Info("send failure", "device", ev.Device, "code", ev.Code, "source", ev.Source, "destination_text", ev.Destination)
	if mon := m.Monitor(); mon != nil {
		mon.Event(ctx, ev)
	}
}

// Reload re-reads the config file: a bad file keeps the running config
// (the error is logged and stated as the "config" fault); a good one
// rebuilds the parts, under the run context whoever asked. data_dir and
// listen need a restart.
func (m *Main) Reload() error {
	m.live.reload.Lock()
	defer m.live.reload.Unlock()
	cur := m.live.get()
	if cur == nil || m.runCtx.Err() != nil {
		return errors.New("not running")
	}
	old := cur.cfg
	cfg, err := config.Load(old.File)
	if err != nil {
		m.faults.set("config", "reload refused, running config kept: "+err.Error())
		m.log.Error("config reload refused; the running config is kept", "err", err)
		return err
	}
	m.faults.clear("config")
	m.faults.clear("settings")
	cfg = storedSettings{m.env}.apply(m.runCtx, cfg)
	if d, err := dataDir(cfg, m.Getenv); err == nil {
		cfg.DataDir = d
	}
	if cfg.DataDir != old.DataDir || cfg.Listen != old.Listen {
		m.log.Warn("data_dir and listen change only at restart", "data_dir", old.DataDir, "listen", old.Listen)
		cfg.DataDir, cfg.Listen = old.DataDir, old.Listen
	}
	m.level.Set(logLevel(cfg.LogLevel))
	m.st.AllowLinkLocal(cfg.AllowLinkLocal)
	// The old parts close before the new open (a listener's port): the
	// watch's last events and the checks still draining call back into
	// Main (Monitor()), which then finds none. Meanwhile events are stored
	// but not routed.
	m.live.swap(nil).close(m.Drain)
	m.live.swap(m.openParts(cfg, cur.watch.names))
	if m.recv != nil {
		m.recv.Reconfigure(cfg) // deliveries log on with the new [checks] budget and [ad]
		m.recv.Relayout()       // a destination added from the CLI gets its folder now
	}
	m.log.Info("config reloaded", "file", cfg.File)
	m.sd.Send("STATUS=" + m.faults.status())
	return nil
}

// SyncDevices re-reads the registry's devices now (after an import) and
// makes the monitor re-read the destinations. ctx bounds the reading
// only: a watch it opens runs under the run context, not the caller's (a
// web request's ends with its answer).
func (m *Main) SyncDevices(ctx context.Context) {
	if p := m.live.get(); p != nil {
		p.watch.Sync(ctx)
	}
	if m.recv != nil {
		m.recv.syncAllow(ctx)
		m.recv.Relayout() // a destination imported gets its folder now
	}
	if mon := m.Monitor(); mon != nil {
		mon.Reload()
	}
}

// syncDevicesLoop keeps the watch's device list in step with the registry
// (the share's allowlist follows it on the receiver's own loop).
func (m *Main) syncDevicesLoop() {
	defer m.wg.Done()
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-m.runCtx.Done():
			return
		case <-t.C:
			if p := m.live.get(); p != nil {
				p.watch.Sync(m.runCtx)
			}
		}
	}
}

// incidentNotifier sends an incident change on every channel and records
// each outcome (table, timeline, metrics, faults).
type incidentNotifier struct {
	n       *notify.Notifier
	incs    *store.Incidents
	metrics *metrics
	faults  *faults
	log     *slog.Logger
	now     func() time.Time
}

// newIncidentNotifier sends on the channels cfg turns on; one that cannot
// be built is its "notify.CHANNEL" fault.
func newIncidentNotifier(e env, cfg config.Config) *incidentNotifier {
	senders, errs := cfg.Notify.Senders()
	for ch, err := range errs {
		e.faults.set("notify."+ch, err.Error())
	}
	return &incidentNotifier{n: notify.New(senders...), incs: e.st.Incidents(), metrics: e.metrics, faults: e.faults,
		log: e.log.With("component", "notify"), now: time.Now}
}

var (
	_ monitor.Notifier        = (*incidentNotifier)(nil)
	_ monitor.WarningNotifier = (*incidentNotifier)(nil)
	_ monitor.GroupNotifier   = (*incidentNotifier)(nil)
)

// Notify implements monitor.Notifier.
func (in *incidentNotifier) Notify(ctx context.Context, ch incident.Change, inc incident.Incident) {
	msg := notify.FromIncident(ch, inc)
	in.record(ctx, inc.ID, msg.Event, in.n.Send(ctx, msg))
}

// NotifyGroup implements monitor.GroupNotifier: one notice for a group
// opened or closed, recorded on the incident whose change did it.
func (in *incidentNotifier) NotifyGroup(ctx context.Context, n incident.GroupNotice, inc incident.Incident) {
	msg := notify.FromGroup(n, inc)
	in.record(ctx, inc.ID, msg.Event, in.n.Send(ctx, msg))
}

// NotifyWarning implements monitor.WarningNotifier.
func (in *incidentNotifier) NotifyWarning(ctx context.Context, raised bool, g warning.Group) {
	msg := notify.FromWarning(raised, g)
	for _, o := range in.n.Send(ctx, msg) {
		result := "ok"
		if o.Err != nil {
			result = "failed"
			in.faults.set("notify."+o.Channel, o.Err.Error())
			in.log.Warn("notification failed", "channel", o.Channel, "event", msg.Event, "warning", g.Key(), "attempts", o.Attempts, "err", o.Err)
		} else {
			in.faults.clear("notify." + o.Channel)
			in.log.Info("notification sent", "channel", o.Channel, "event", msg.Event, "warning", g.Key())
		}
		in.metrics.notify.WithLabelValues(o.Channel, msg.Event, result).Inc()
	}
}

func (in *incidentNotifier) record(ctx context.Context, incidentID int64, event string, outs []notify.Outcome) {
	for _, o := range outs {
		rec := store.Notification{IncidentID: incidentID, At: in.now(), Event: event, Channel: o.Channel, Attempts: o.Attempts}
		result := "ok"
		if o.Err != nil {
			rec.Error, result = o.Err.Error(), "failed"
			in.faults.set("notify."+o.Channel, o.Err.Error())
			in.log.Warn("notification failed", "channel", o.Channel, "event", event, "incident", incidentID, "attempts", o.Attempts, "err", o.Err)
		} else {
			in.faults.clear("notify." + o.Channel)
			in.log.Info("notification sent", "channel", o.Channel, "event", event, "incident", incidentID)
		}
		in.metrics.notify.WithLabelValues(o.Channel, event, result).Inc()
		if err := in.incs.AddNotification(context.WithoutCancel(ctx), rec); err != nil {
			in.log.Error("record notification", "err", err)
		}
	}
}
