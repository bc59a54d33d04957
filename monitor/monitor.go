// Package monitor is the scheduler of `scanwarden serve`: it checks every
// destination on an interval (with jitter), checks a destination at once
// when a device reports a send failure for it, stores every report, feeds
// the incident rules and hands their changes to the notifier. At most
// MaxConcurrent checks run at once and at most one at a time per file
// server (a Windows client edition allows 20 sessions). The lockout budget
// is the checker's: every check goes through the same ledger and directory
// as `scanwarden check`, so however many events arrive a stored wrong
// password never locks the account.
//
// It declares the small interfaces it needs and speaks no SQL.
package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/warning"
)

// Registry lists destinations and finds the ones a device's send failure
// is about.
type Registry interface {
	Destinations(ctx context.Context) ([]Destination, error)
	// Match returns the destination the event names, or all of the
	// device's destinations when it names none; none when it matches
	// nothing registered.
	Match(ctx context.Context, ev snmp.Event) ([]Destination, error)
}

// Checker runs one check (smbcheck.Run with the ledger and directory) of
// d's target as its device's client (d.Client) would — or, d bridged, as
// the bridge delivers.
type Checker interface {
	Check(ctx context.Context, d Destination, progress func(smbcheck.Step)) smbcheck.Report
}

// Reports keeps every report; the id goes on the incident's timeline (0
// when the store gives none).
type Reports interface {
	AddReport(ctx context.Context, destination string, rep smbcheck.Report) (int64, error)
}

// Incidents applies the rules to a destination's latest incident in one
// transaction (store.Incidents.UpdateIncident).
type Incidents interface {
	UpdateIncident(ctx context.Context, destination string, fn func(cur *incident.Incident) incident.Result) (incident.Result, error)
}

// Notifier tells the admin about a change; it records what it sent.
type Notifier interface {
	Notify(ctx context.Context, ch incident.Change, inc incident.Incident)
}

// Warnings judges each stored report for what will fail days ahead
// (warning.Tracker over the store).
type Warnings interface {
	Observe(ctx context.Context, destination, device string, rep smbcheck.Report) (warning.Update, error)
}

// Sweeps keeps what a device failure that named no destination led to:
// which of the device's destinations were checked and what they found
// (store.Events.SetEventSweep, shown with the event).
type Sweeps interface {
	RecordSweep(ctx context.Context, ev snmp.Event, s incident.Sweep) error
}

// WarningNotifier tells the admin once about each warning group raised
// (no destination had it before) and cleared (none has it any more).
type WarningNotifier interface {
	NotifyWarning(ctx context.Context, raised bool, g warning.Group)
}

// Config tunes the monitor. Zero means zero where it can (Jitter,
// EventGap, CloseAfter); Interval and MaxConcurrent must be set.
type Config struct {
	Interval      time.Duration // each destination checked this often
	Jitter        time.Duration // up to this much later, at random
	MaxConcurrent int
	CloseAfter    time.Duration // incident.Next's close_after
	// EventGap: a device failure within this span of the destination's
	// last event-triggered check is put on the incident without a new check.
	EventGap time.Duration
	// Refresh is how often the destination list is re-read (0: 30 s).
	Refresh time.Duration
	// Tick is how often due checks are looked for (0: 1 s).
	Tick time.Duration
	// NotifyTimeout bounds one notification (all its retries; 0: 5 min).
	NotifyTimeout time.Duration
	// OnCheck is called after each completed check (metrics).
	OnCheck func(d Destination, rep smbcheck.Report, took time.Duration, reason string)
	// Warnings, when set, judges every stored report for warnings;
	// WarningNotifier (may be nil) is told of each group raised or cleared.
	Warnings        Warnings
	WarningNotifier WarningNotifier
	// Sweeps, when set, keeps what each device failure naming no
	// destination found (see Event).
	Sweeps Sweeps
	// Groups, when set, puts destinations failing for one cause on one
	// server or account into one incident group, told of by GroupNotifier
	// (may be nil) instead of each destination's own notices.
	Groups        Groups
	GroupNotifier GroupNotifier
	// GroupSettle: a group's opening notice waits, at most this long, for
	// the checks still queued or running, so that it names every
	// destination the same round finds failing (0: sent at once).
	GroupSettle time.Duration
	// OnFault is called when reading the registry or writing reports and
	// incidents fails (err set) and when it works again (err nil); part is
	// "registry" or "store".
	OnFault func(part string, err error)

	Log  *slog.Logger
	Now  func() time.Time
	Rand func(n int64) int64 // [0, n); nil: math/rand/v2
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Interval <= 0:
		return fmt.Errorf("monitor: interval %s: must be positive", c.Interval)
	case c.Jitter < 0:
		return fmt.Errorf("monitor: jitter %s: 0 or more", c.Jitter)
	case c.MaxConcurrent < 1:
		return fmt.Errorf("monitor: max_concurrent %d: at least 1", c.MaxConcurrent)
	case c.CloseAfter < 0 || c.EventGap < 0:
		return errors.New("monitor: close_after and event_gap: 0 or more")
	}
	return nil
}

// Reasons a check runs.
const (
	ReasonSchedule = "schedule"
	ReasonEvent    = "event"
	ReasonManual   = "manual"
	// ReasonClose: the destination's open incident has been green for
	// close_after; a fresh check proves it still is, and the rules close it.
	ReasonClose = "close"
)

// Result is what a requested check gives back.
type Result struct {
	Report   smbcheck.Report
	Incident *incident.Incident // the destination's incident after the check, nil when none
	Err      error
}

// Stats are the monitor's counters.
type Stats struct {
	Destinations int
	Pending      int
	Running      int
	Notifying    int // incident and warning notifications being sent
	Checks       int64
	EventChecks  int64
	Unmatched    int64 // device failures that matched no destination
	Faults       int64 // store or registry errors
	LastFault    string
}

// Monitor is the scheduler. New, then Open; Close drains. It composes
// the parts, each with its own state and lock: the destination list
// (roster), when each is due (timetable), the checks waiting and running
// (queue), the devices' failures (router), the incidents (desk) and the
// notifications (outbox).
type Monitor struct {
	cfg     Config
	log     *slog.Logger
	checker Checker
	reports Reports

	list   *roster
	times  *timetable
	queue  *queue
	events *router
	desk   *desk
	out    *outbox
	tally  *tally

	ctx      context.Context // checks run under it: cancelled when the drain gives up
	cancel   context.CancelFunc
	loopStop context.CancelFunc
	loopWG   sync.WaitGroup
}

// New checks cfg; notifier may be nil (nothing sent).
func New(cfg Config, reg Registry, checker Checker, reports Reports, incidents Incidents, notifier Notifier) (*Monitor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if reg == nil || checker == nil || reports == nil || incidents == nil {
		return nil, errors.New("monitor: registry, checker, reports and incidents are required")
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 30 * time.Second
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.NotifyTimeout <= 0 {
		cfg.NotifyTimeout = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Int64N
	}
	m := &Monitor{cfg: cfg, log: cfg.Log.With("component", "monitor"), checker: checker, reports: reports,
		list: newRoster(reg, cfg.Refresh, cfg.Now), times: newTimetable(cfg), out: &outbox{timeout: cfg.NotifyTimeout},
		tally: &tally{}}
	m.queue = newQueue(cfg.MaxConcurrent, m.run)
	m.desk = &desk{incidents: incidents, notifier: notifier, cfg: cfg, now: cfg.Now, log: m.log, out: m.out,
		arm: m.armClose, busy: m.busy, fault: m.fault}
	m.events = &router{reg: reg, gap: cfg.EventGap, sweeps: cfg.Sweeps, now: cfg.Now, log: m.log, list: m.list,
		queue: m.queue, desk: m.desk, tally: m.tally, fault: m.fault, lastEvent: map[string]time.Time{}}
	return m, nil
}

// Open starts the scheduling loop. Checks run under a context of their own,
// not ctx, so that Close can let running checks finish.
func (m *Monitor) Open(ctx context.Context) error {
	if m.cancel != nil {
		return errors.New("monitor: already open")
	}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.desk.stop, m.events.base = m.ctx.Done(), context.WithoutCancel(m.ctx)
	m.out.open(ctx)
	loopCtx, stop := context.WithCancel(ctx)
	m.loopStop = stop
	m.loopWG.Add(1)
	go func() {
		defer m.loopWG.Done()
		m.loop(loopCtx)
	}()
	return nil
}

// Close stops scheduling, waits up to drain for running checks to finish,
// then cancels what still runs and waits for it (a cancelled check ends
// within its step timeout). Pending requests get an error.
func (m *Monitor) Close() error { return m.Shutdown(8 * time.Second) }

// Shutdown is Close with its own drain time.
func (m *Monitor) Shutdown(drain time.Duration) error {
	if m.cancel == nil {
		return nil
	}
	for _, j := range m.queue.close() {
		for _, w := range j.waiters {
			w <- Result{Err: errors.New("scanwarden is stopping")}
		}
	}
	m.loopStop()
	deadline := time.Now().Add(drain)
	done := make(chan struct{})
	go func() { m.loopWG.Wait(); m.queue.wait(); close(done) }()
	t := time.NewTimer(drain)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		m.log.Warn("checks still running at shutdown: cancelling them")
		m.cancel()
		<-done
	}
	m.cancel()
	// Notifications in flight (a webhook retrying with back-off) get what
	// is left of the drain time, then are cancelled.
	m.out.drain(deadline)
	return nil
}

// Stats returns the counters.
func (m *Monitor) Stats() Stats {
	s := m.tally.snapshot()
	s.Destinations = m.list.size()
	s.Pending, s.Running = m.queue.counts()
	s.Notifying = m.out.sending()
	return s
}

// busy says whether checks are queued or running.
func (m *Monitor) busy() bool {
	pending, running := m.queue.counts()
	return pending > 0 || running > 0
}

func (m *Monitor) fault(what string, err error) {
	m.log.Error(what, "err", err)
	if m.cfg.OnFault != nil {
		part := "store"
		if strings.HasPrefix(what, "read destinations") || strings.HasPrefix(what, "match event") {
			part = "registry"
		}
		m.cfg.OnFault(part, fmt.Errorf("%s: %w", what, err))
	}
	m.tally.add(func(s *Stats) {
		s.Faults++
		s.LastFault = what + ": " + err.Error()
	})
}

// tally keeps the counters of Stats that are counted as things happen.
type tally struct {
	mu sync.Mutex
	s  Stats
}

func (t *tally) add(f func(*Stats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.s)
}

func (t *tally) snapshot() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.s
}

// loop enqueues due checks; it wakes every Tick (or when poked).
func (m *Monitor) loop(ctx context.Context) {
	t := time.NewTicker(m.cfg.Tick)
	defer t.Stop()
	for {
		m.schedule(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.times.wake:
		}
	}
}

// refresh re-reads the destination list when it is older than Refresh
// (or when forced) and has the parts follow it.
func (m *Monitor) refresh(ctx context.Context, force bool) {
	ch, ok, err := m.list.refresh(ctx, force)
	if err != nil {
		if ctx.Err() == nil {
			m.fault("read destinations", err)
		}
		return
	}
	if !ok {
		return
	}
	if m.cfg.OnFault != nil {
		m.cfg.OnFault("registry", nil)
	}
	m.times.relist(ch, m.cfg.Now())
	m.events.relist(ch)
}

// schedule queues the checks the timetable finds due.
func (m *Monitor) schedule(ctx context.Context) {
	m.refresh(ctx, false)
	due := m.times.dueNow(m.list.list(), m.cfg.Now())
	keys := make([]string, len(due))
	for i, d := range due {
		keys[i] = key(d.dest.Name)
	}
	m.queue.offer(keys, func(i int, waiting *job) *job {
		if waiting != nil {
			return nil
		}
		return &job{dest: due[i].dest, reason: due[i].reason}
	})
}

// armClose close-arms the destination (timetable.armClose) while it is
// listed and the monitor runs.
func (m *Monitor) armClose(name string, inc *incident.Incident) {
	if _, listed := m.list.get(name); !listed || m.queue.closed() {
		m.times.disarm(name)
		return
	}
	m.times.armClose(name, inc)
}

// Loaded reports whether the first destination list has been read: until
// then a destination that appears belongs to the first round (spread over
// the jitter), after it one is checked on arrival.
func (m *Monitor) Loaded() bool { return m.list.isLoaded() }

// Reload makes the next scheduling round re-read the destination list
// (after an import, an edit in the web page).
func (m *Monitor) Reload() {
	m.list.expire()
	m.times.poke()
}

// Event takes a fresh device send failure: it is put on the incident of
// each destination it matches, and each of those is checked at once (the
// check's result folded in with it) unless one was checked for an event
// within EventGap. A failure that names no destination is swept instead
// (see router.sweep). It does not block on the check.
func (m *Monitor) Event(ctx context.Context, ev snmp.Event) { m.events.event(ctx, ev) }

// Delivery puts a held scan's delivery (or its failure) on the
// destination's incident: a delivery that failed opens one like a failing
// check; a delivered scan is a line on the open incident's timeline.
func (m *Monitor) Delivery(ctx context.Context, destination string, delivered bool, text string) {
	d, ok := m.list.get(destination)
	if !ok {
		d = Destination{Name: destination}
	}
	in := incident.Input{Kind: incident.KindDelivery, At: m.cfg.Now(), Destination: d.Name, Device: d.Device,
		Delivered: delivered, Text: text}
	if _, err := m.desk.apply(context.WithoutCancel(ctx), d, []incident.Input{in}); err != nil {
		m.log.Warn("delivery not recorded on incident", "destination", destination, "err", err)
	}
}
