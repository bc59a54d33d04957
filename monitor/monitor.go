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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/warning"
)

// Destination is what the monitor needs of a registered destination.
type Destination struct {
	Name   string
	Device string // the device it belongs to ("" when none)
	Target smbcheck.Target
	// LastCheck is when it was last checked (zero: never, or not known).
	// At first sight the next check is due an interval after it, so a
	// restart does not check every destination at once; one whose last
	// check is older than the interval (or that has none) is checked within
	// the jitter, spread over the first minutes. A destination that appears
	// or changes after the first list (added, imported, edited) is checked
	// at once (check on arrival).
	LastCheck time.Time
	// LastVerdict is that check's verdict (with LastCheck): a device
	// failure that names no destination takes it as the destination's
	// state when it is within event_gap instead of checking again.
	LastVerdict smbcheck.Verdict
	// PasswordUnreadable: the stored password is not known (why); its check
	// replays nothing and says so (smbcheck.PasswordUnreadable).
	PasswordUnreadable string
	// Client is its device's SMB client, as every check of it replays it
	// (registry.Resolved.Client; zero: scanwarden's own).
	Client smbcheck.Device
}

// server is the per-server cap's key.
func (d Destination) server() string { return strings.ToLower(strings.TrimSpace(d.Target.Host)) }

func key(name string) string { return strings.ToLower(name) }

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
// t as the device's client dev would.
type Checker interface {
	Check(ctx context.Context, t smbcheck.Target, dev smbcheck.Device, progress func(smbcheck.Step)) smbcheck.Report
}

// Reports keeps every report; the id goes on the incident's timeline (0
// when the store gives none).
type Reports interface {
	AddReport(ctx context.Context, destination string, rep smbcheck.Report) (int64, error)
}

// Incidents applies the rules to a destination's latest incident in one
// transaction (store.UpdateIncident).
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
// (store.SetEventSweep, shown with the event).
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

type job struct {
	dest     Destination
	reason   string
	inputs   []incident.Input // device failures to fold in before the check's result
	waiters  []chan Result
	progress []func(smbcheck.Step)
	sweeps   []sweepSlot // device failures naming no destination that wait for this check
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

// Monitor is the scheduler. New, then Open; Close drains.
type Monitor struct {
	cfg       Config
	reg       Registry
	checker   Checker
	reports   Reports
	incidents Incidents
	notifier  Notifier
	log       *slog.Logger

	mu       sync.Mutex
	dests    map[string]Destination
	loadedAt time.Time
	// loaded is set once the first list was read: a destination that
	// appears or changes after that is checked at once (arrival).
	loaded    bool
	prints    map[string]string // destination → fingerprint of what is replayed
	pending   []*job
	byDest    map[string]*job
	busy      map[string]bool // server → a check runs
	running   int
	nextDue   map[string]time.Time
	lastEvent map[string]time.Time            // last event-triggered check
	closeAt   map[string]time.Time            // open incident's CloseDue: checked then
	last      map[string]incident.SweepResult // last finished check, whatever its reason
	stats     Stats
	closing   bool

	wake     chan struct{}
	ctx      context.Context // checks run under it: cancelled when the drain gives up
	cancel   context.CancelFunc
	loopStop context.CancelFunc
	// notifications run under their own context: Shutdown lets them use
	// the rest of the drain time.
	notifyCtx    context.Context
	notifyCancel context.CancelFunc
	wg           sync.WaitGroup // loop, checks
	notifyWG     sync.WaitGroup
	notifying    atomic.Int64 // notifications being sent (Stats)
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
	return &Monitor{cfg: cfg, reg: reg, checker: checker, reports: reports, incidents: incidents, notifier: notifier,
		log: cfg.Log.With("component", "monitor"), dests: map[string]Destination{}, byDest: map[string]*job{},
		busy: map[string]bool{}, nextDue: map[string]time.Time{}, lastEvent: map[string]time.Time{},
		closeAt: map[string]time.Time{}, last: map[string]incident.SweepResult{},
		wake: make(chan struct{}, 1)}, nil
}

// Open starts the scheduling loop. Checks run under a context of their own,
// not ctx, so that Close can let running checks finish.
func (m *Monitor) Open(ctx context.Context) error {
	if m.cancel != nil {
		return errors.New("monitor: already open")
	}
	m.ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	m.notifyCtx, m.notifyCancel = context.WithCancel(context.WithoutCancel(ctx))
	loopCtx, stop := context.WithCancel(ctx)
	m.loopStop = stop
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
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
	m.mu.Lock()
	m.closing = true
	pending := m.pending
	m.pending, m.byDest = nil, map[string]*job{}
	m.mu.Unlock()
	for _, j := range pending {
		for _, w := range j.waiters {
			w <- Result{Err: errors.New("scanwarden is stopping")}
		}
	}
	m.loopStop()
	deadline := time.Now().Add(drain)
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
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
	ndone := make(chan struct{})
	go func() { m.notifyWG.Wait(); close(ndone) }()
	nt := time.NewTimer(max(0, time.Until(deadline)))
	defer nt.Stop()
	select {
	case <-ndone:
	case <-nt.C:
		m.notifyCancel()
		<-ndone
	}
	m.notifyCancel()
	return nil
}

// Stats returns the counters.
func (m *Monitor) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stats
	s.Destinations, s.Pending, s.Running = len(m.dests), len(m.pending), m.running
	s.Notifying = int(m.notifying.Load())
	return s
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
	m.mu.Lock()
	m.stats.Faults++
	m.stats.LastFault = what + ": " + err.Error()
	m.mu.Unlock()
}

func (m *Monitor) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
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
		case <-m.wake:
		}
	}
}

func (m *Monitor) jitter() time.Duration {
	if m.cfg.Jitter <= 0 {
		return 0
	}
	return time.Duration(m.cfg.Rand(int64(m.cfg.Jitter) + 1))
}

// refresh re-reads the destination list when it is older than Refresh.
func (m *Monitor) refresh(ctx context.Context, force bool) {
	m.mu.Lock()
	stale := force || m.cfg.Now().Sub(m.loadedAt) >= m.cfg.Refresh
	m.mu.Unlock()
	if !stale {
		return
	}
	ds, err := m.reg.Destinations(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.fault("read destinations", err)
		}
		return
	}
	if m.cfg.OnFault != nil {
		m.cfg.OnFault("registry", nil)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.cfg.Now()
	m.loadedAt = now
	m.dests = make(map[string]Destination, len(ds))
	prints := make(map[string]string, len(ds))
	for _, d := range ds {
		k := key(d.Name)
		m.dests[k] = d
		prints[k] = fingerprint(d)
		old, seen := m.prints[k]
		if m.loaded && (!seen || old != prints[k]) {
			// Added, imported or edited (host, path, user, password,
			// auth): checked at once, behind the same caps; its interval
			// runs from that check.
			m.nextDue[k] = now
			delete(m.closeAt, k)
			delete(m.last, k) // what it was before says nothing now
		} else if _, known := m.last[k]; !known && !d.LastCheck.IsZero() {
			m.last[k] = incident.SweepResult{Destination: d.Name, At: d.LastCheck, Cause: d.LastVerdict.Cause,
				Summary: d.LastVerdict.Summary}
		}
	}
	m.prints, m.loaded = prints, true
	for k := range m.nextDue {
		if _, ok := m.dests[k]; !ok {
			delete(m.nextDue, k)
			delete(m.lastEvent, k)
			delete(m.closeAt, k)
			delete(m.last, k)
		}
	}
}

// fingerprint is what a check replays of d, hashed (the password never
// kept a second time in clear): a change means "check it again now" — its
// device's client too (a profile learned or set by hand).
func fingerprint(d Destination) string {
	t := d.Target
	h := sha256.Sum256([]byte(strings.Join([]string{t.Host, strconv.Itoa(t.Port), t.Share, t.Path, t.User, t.Password.Reveal(),
		t.Workstation, string(t.Auth), d.PasswordUnreadable, fmt.Sprintf("%+v", d.Client)}, "\x00")))
	return hex.EncodeToString(h[:])
}

// Loaded reports whether the first destination list has been read: until
// then a destination that appears belongs to the first round (spread over
// the jitter), after it one is checked on arrival.
func (m *Monitor) Loaded() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loaded
}

// Reload makes the next scheduling round re-read the destination list
// (after an import, an edit in the web page).
func (m *Monitor) Reload() {
	m.mu.Lock()
	m.loadedAt = time.Time{}
	m.mu.Unlock()
	m.poke()
}

func (m *Monitor) schedule(ctx context.Context) {
	m.refresh(ctx, false)
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return
	}
	names := make([]string, 0, len(m.dests))
	for k := range m.dests {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if at, ok := m.closeAt[k]; ok && !now.Before(at) {
			// The open incident's green span has reached close_after.
			delete(m.closeAt, k)
			m.nextDue[k] = now.Add(m.cfg.Interval + m.jitter())
			if _, queued := m.byDest[k]; !queued {
				m.enqueueLocked(&job{dest: m.dests[k], reason: ReasonClose})
			}
			continue
		}
		due, ok := m.nextDue[k]
		if !ok {
			// First sight: an interval after its last check, else soon,
			// the first round spread over the jitter.
			due := now.Add(m.jitter())
			if last := m.dests[k].LastCheck; !last.IsZero() && last.Add(m.cfg.Interval).After(now) {
				due = last.Add(m.cfg.Interval + m.jitter())
			}
			m.nextDue[k] = due
			continue
		}
		if now.Before(due) {
			continue
		}
		m.nextDue[k] = now.Add(m.cfg.Interval + m.jitter())
		if _, queued := m.byDest[k]; queued {
			continue
		}
		m.enqueueLocked(&job{dest: m.dests[k], reason: ReasonSchedule})
	}
	m.dispatchLocked()
}

func (m *Monitor) enqueueLocked(j *job) {
	m.pending = append(m.pending, j)
	m.byDest[key(j.dest.Name)] = j
}

// dispatchLocked starts pending jobs, in order, while the caps allow.
func (m *Monitor) dispatchLocked() {
	if m.closing {
		return
	}
	kept := m.pending[:0]
	for _, j := range m.pending {
		srv := j.dest.server()
		if m.running >= m.cfg.MaxConcurrent || m.busy[srv] {
			kept = append(kept, j)
			continue
		}
		delete(m.byDest, key(j.dest.Name))
		m.busy[srv] = true
		m.running++
		m.wg.Add(1)
		go m.run(j)
	}
	for i := len(kept); i < len(m.pending); i++ {
		m.pending[i] = nil
	}
	m.pending = kept
}

// run checks one destination and feeds the result on.
func (m *Monitor) run(j *job) {
	defer m.wg.Done()
	start := m.cfg.Now()
	progress := func(s smbcheck.Step) {
		for _, p := range j.progress {
			p(s)
		}
	}
	log := m.log.With("destination", j.dest.Name, "reason", j.reason)
	var rep smbcheck.Report
	if why := j.dest.PasswordUnreadable; why != "" {
		rep = smbcheck.PasswordUnreadable(j.dest.Target, why, start)
		for _, s := range rep.Steps {
			progress(s)
		}
	} else {
		rep = m.checker.Check(m.ctx, j.dest.Target, j.dest.Client, progress)
	}
	took := m.cfg.Now().Sub(start)
	res := Result{Report: rep}
	if m.ctx.Err() != nil {
		// Interrupted by the shutdown: not a finding about the destination.
		res.Err = errors.New("check interrupted: scanwarden is stopping")
		log.Warn("check interrupted by shutdown")
		m.sweepResult(j, incident.SweepResult{Destination: j.dest.Name, At: start, Fresh: true, Interrupted: true})
		if len(j.inputs) > 0 {
			res.Incident, _ = m.apply(context.Background(), j.dest, j.inputs)
		}
	} else {
		log.Info("checked", "cause", rep.Verdict.Cause, "ms", took.Milliseconds())
		ctx := context.WithoutCancel(m.ctx)
		id, err := m.reports.AddReport(ctx, j.dest.Name, rep)
		if err != nil {
			m.fault("store report of "+j.dest.Name, err)
		}
		in := incident.Input{Kind: incident.KindCheck, At: m.cfg.Now(), Destination: j.dest.Name, Device: j.dest.Device,
			Verdict: rep.Verdict, ReportID: id, Evidence: rep.ServerLog.Lines(), Group: incident.KeyOf(rep)}
		if err == nil {
			m.warn(ctx, j.dest, rep)
		}
		var aerr error
		res.Incident, aerr = m.apply(ctx, j.dest, append(j.inputs, in))
		if aerr != nil {
			res.Err = aerr
		} else if err == nil && m.cfg.OnFault != nil {
			m.cfg.OnFault("store", nil)
		}
		fp := fingerprint(j.dest)
		found := incident.SweepResult{Destination: j.dest.Name, At: start, Cause: rep.Verdict.Cause,
			Summary: rep.Verdict.Summary, Fresh: true}
		m.mu.Lock()
		m.stats.Checks++
		if j.reason == ReasonEvent {
			m.stats.EventChecks++
		}
		if m.prints[key(j.dest.Name)] == fp {
			m.last[key(j.dest.Name)] = found // not when it was edited meanwhile
		}
		m.mu.Unlock()
		if m.cfg.OnCheck != nil {
			m.cfg.OnCheck(j.dest, rep, took, j.reason)
		}
		m.sweepResult(j, found)
	}
	for _, w := range j.waiters {
		w <- res
	}
	m.mu.Lock()
	m.running--
	delete(m.busy, j.dest.server())
	m.dispatchLocked()
	m.mu.Unlock()
}

// warn judges a stored report for warnings and notifies, in the
// background, each group that appeared or went. A warning never touches
// the incident or the verdict.
func (m *Monitor) warn(ctx context.Context, d Destination, rep smbcheck.Report) {
	if m.cfg.Warnings == nil {
		return
	}
	up, err := m.cfg.Warnings.Observe(ctx, d.Name, d.Device, rep)
	if err != nil {
		m.fault("judge warnings of "+d.Name, err)
		return
	}
	send := func(raised bool, g warning.Group) {
		what := "cleared"
		if raised {
			what = "raised"
		}
		m.log.Info("warning "+what, "kind", g.Kind, "subject", g.Subject, "destinations", len(g.Destinations))
		if m.cfg.WarningNotifier == nil {
			return
		}
		m.notify(func(nctx context.Context) { m.cfg.WarningNotifier.NotifyWarning(nctx, raised, g) })
	}
	for _, g := range up.Raised {
		send(true, g)
	}
	for _, g := range up.Cleared {
		send(false, g)
	}
}

// apply folds inputs into the destination's incident and notifies every
// change (in the background).
func (m *Monitor) apply(ctx context.Context, d Destination, ins []incident.Input) (*incident.Incident, error) {
	now := m.cfg.Now()
	res, err := m.incidents.UpdateIncident(ctx, d.Name, func(cur *incident.Incident) incident.Result {
		return incident.Fold(cur, ins, now, m.cfg.CloseAfter)
	})
	if err != nil {
		m.fault("update incident of "+d.Name, err)
		return nil, err
	}
	m.armClose(d.Name, res.Incident)
	if res.Incident == nil {
		return nil, nil
	}
	inc := *res.Incident
	grouped := m.regroup(ctx, d, ins, inc, now)
	for _, ch := range res.Changes {
		m.log.Info("incident "+string(ch), "destination", d.Name, "incident", inc.ID, "cause", inc.Cause)
		if m.notifier == nil || grouped {
			continue // a group's incident is told of once for all of them
		}
		m.notify(func(nctx context.Context) { m.notifier.Notify(nctx, ch, inc) })
	}
	return &inc, nil
}

// notify sends in the background, under the notifications' context with
// NotifyTimeout; Stats counts it in Notifying until it returns.
func (m *Monitor) notify(send func(ctx context.Context)) {
	m.notifying.Add(1)
	m.notifyWG.Add(1)
	go func() {
		defer m.notifyWG.Done()
		defer m.notifying.Add(-1)
		nctx, cancel := context.WithTimeout(m.notifyCtx, m.cfg.NotifyTimeout)
		defer cancel()
		send(nctx)
	}()
}

// armClose schedules a check of the destination at the moment its open
// incident may close (incident.CloseDue), so that it closes then rather
// than at the next scheduled check, up to an interval late; a failure that
// cleared the green span disarms it.
func (m *Monitor) armClose(name string, inc *incident.Incident) {
	due := inc.CloseDue(m.cfg.CloseAfter)
	k := key(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if due.IsZero() || m.closing {
		delete(m.closeAt, k)
		return
	}
	if _, ok := m.dests[k]; !ok {
		return
	}
	if at, ok := m.closeAt[k]; ok && at.Equal(due) {
		return
	}
	m.closeAt[k] = due
	// Wake the loop then (it also looks every Tick).
	time.AfterFunc(max(0, due.Sub(m.cfg.Now())), m.poke)
}

// Event takes a fresh device send failure: it is put on the incident of
// each destination it matches, and each of those is checked at once (the
// check's result folded in with it) unless one was checked for an event
// within EventGap. A failure that names no destination is swept instead
// (see sweep). It does not block on the check.
func (m *Monitor) Event(ctx context.Context, ev snmp.Event) {
	ds, err := m.reg.Match(ctx, ev)
	if err != nil {
		m.fault("match event of "+ev.Device, err)
		return
	}
	if len(ds) == 0 {
		m.mu.Lock()
		m.stats.Unmatched++
		m.mu.Unlock()
		m.log.Info("send failure matches no registered destination", "device", ev.Device, "code", ev.Code, "destination_text", ev.Destination)
		return
	}
	if ev.Destination == "" {
		m.sweep(ev, ds)
		return
	}
	now := m.cfg.Now()
	for _, d := range ds {
		in := incident.Input{Kind: incident.KindDeviceFailure, At: ev.Time, Destination: d.Name, Device: d.Device,
			Code: ev.Code, Text: ev.Text}
		if in.At.IsZero() {
			in.At = now
		}
		k := key(d.Name)
		m.mu.Lock()
		if m.closing {
			m.mu.Unlock()
			return
		}
		if j, ok := m.byDest[k]; ok {
			j.inputs = append(j.inputs, in) // a check is already waiting: it takes this one along
			m.mu.Unlock()
			continue
		}
		if last, ok := m.lastEvent[k]; ok && now.Sub(last) < m.cfg.EventGap {
			m.mu.Unlock()
			if _, err := m.apply(context.WithoutCancel(ctx), d, []incident.Input{in}); err != nil {
				m.log.Warn("device failure not recorded on incident", "destination", d.Name, "err", err)
			}
			continue
		}
		m.lastEvent[k] = now
		m.enqueueLocked(&job{dest: d, reason: ReasonEvent, inputs: []incident.Input{in}})
		m.dispatchLocked()
		m.mu.Unlock()
	}
}

// sweep gathers the checks of a device's destinations for one send
// failure that named none of them.
type sweep struct {
	ev   snmp.Event
	mu   sync.Mutex
	s    incident.Sweep
	left int // checks still to come
}

type sweepSlot struct {
	sw *sweep
	i  int // index in sw.s.Checked
}

// sweep handles a send failure that names no destination (a console text
// such as "Cannot send. Error 1103", an alert, a job with no folder, a mail
// without one): each of the device's destinations whose last check is
// older than EventGap is checked, through the same queue and caps as any
// check (MaxConcurrent, one at a time per file server, the checker's
// lockout budget); one checked more recently counts with that check. When
// every result is in, the failure goes on the incident of each one that
// fails (with what the others found), and what was found is kept with the
// event (Config.Sweeps): the one failing destination, or that all of them
// accept scans now and the failure was transient or on the device.
func (m *Monitor) sweep(ev snmp.Event, ds []Destination) {
	now := m.cfg.Now()
	if ev.Time.IsZero() {
		ev.Time = now
	}
	sw := &sweep{ev: ev, s: incident.Sweep{At: now, Device: ds[0].Device, DeviceStatus: deviceStatus(ev),
		Checked: make([]incident.SweepResult, len(ds))}}
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return
	}
	sw.mu.Lock() // results cannot come in before every slot is placed
	for i, d := range ds {
		k := key(d.Name)
		sw.s.Checked[i] = incident.SweepResult{Destination: d.Name}
		if j, ok := m.byDest[k]; ok {
			j.sweeps = append(j.sweeps, sweepSlot{sw, i}) // a check already waits: its result counts
			sw.left++
			continue
		}
		if last, ok := m.last[k]; ok && now.Sub(last.At) < m.cfg.EventGap {
			last.Fresh = false
			sw.s.Checked[i] = last
			continue
		}
		m.lastEvent[k] = now
		m.enqueueLocked(&job{dest: d, reason: ReasonEvent, sweeps: []sweepSlot{{sw, i}}})
		sw.left++
	}
	checks := sw.left
	sw.mu.Unlock()
	m.dispatchLocked()
	m.mu.Unlock()
	m.log.Info("send failure names no destination: checking the device's destinations", "device", ev.Device,
		"code", ev.Code, "destinations", len(ds), "checks", checks)
	done := checks == 0
	if done {
		m.finishSweep(sw)
	}
}

// deviceStatus is the device's own status as the poll that found the
// failure read it ("" when the event came another way).
func deviceStatus(ev snmp.Event) string {
	st := ev.Detail[snmp.DetailPrinterStatus]
	if st == "" {
		return ""
	}
	if errs := ev.Detail[snmp.DetailPrinterErrors]; errs != "" {
		return st + "; errors: " + errs
	}
	return st + ", no error"
}

// sweepResult hands a finished check to the sweeps waiting for it.
func (m *Monitor) sweepResult(j *job, r incident.SweepResult) {
	for _, sl := range j.sweeps {
		sl.sw.mu.Lock()
		sl.sw.s.Checked[sl.i] = r
		sl.sw.left--
		done := sl.sw.left == 0
		sl.sw.mu.Unlock()
		if done {
			m.finishSweep(sl.sw)
		}
	}
}

// finishSweep puts a complete sweep on the failing destinations'
// incidents and keeps it with the event.
func (m *Monitor) finishSweep(sw *sweep) {
	ctx := context.WithoutCancel(m.ctx)
	sw.mu.Lock()
	s := sw.s
	s.Checked = append([]incident.SweepResult(nil), sw.s.Checked...)
	sw.mu.Unlock()
	s.At = m.cfg.Now()
	ev := sw.ev
	failing := s.Failing()
	text := ev.Text
	if text != "" {
		text += " — "
	}
	text += "the device named no destination; checked " + s.Findings() + ". " + s.Text()
	for _, f := range failing {
		m.mu.Lock()
		d, ok := m.dests[key(f.Destination)]
		m.mu.Unlock()
		if !ok {
			d = Destination{Name: f.Destination, Device: s.Device}
		}
		in := incident.Input{Kind: incident.KindDeviceFailure, At: ev.Time, Destination: d.Name, Device: d.Device,
			Code: ev.Code, Text: text}
		if _, err := m.apply(ctx, d, []incident.Input{in}); err != nil {
			m.log.Warn("device failure not recorded on incident", "destination", d.Name, "err", err)
		}
	}
	if m.cfg.Sweeps != nil {
		if err := m.cfg.Sweeps.RecordSweep(ctx, ev, s); err != nil {
			m.fault("keep what the checks after "+ev.Device+"'s failure found", err)
		}
	}
	m.log.Info("send failure naming no destination: checks done", "device", ev.Device, "code", ev.Code,
		"failing", len(failing), "found", s.Findings())
}

// ErrUnknownDestination is CheckNow's answer for a name not registered.
var ErrUnknownDestination = errors.New("no such destination")

// CheckNow checks the named destination now (behind the caps, like any
// other check), streaming each step to progress, and returns the report
// once stored and applied. A check already waiting for that destination is
// joined instead of a second one.
func (m *Monitor) CheckNow(ctx context.Context, name string, progress func(smbcheck.Step)) (Result, error) {
	k := key(name)
	m.mu.Lock()
	d, ok := m.dests[k]
	m.mu.Unlock()
	if !ok {
		m.refresh(ctx, true)
		m.mu.Lock()
		d, ok = m.dests[k]
		m.mu.Unlock()
		if !ok {
			return Result{}, fmt.Errorf("%q: %w", name, ErrUnknownDestination)
		}
	}
	done := make(chan Result, 1)
	m.mu.Lock()
	if m.closing {
		m.mu.Unlock()
		return Result{}, errors.New("scanwarden is stopping")
	}
	j, queued := m.byDest[k]
	if !queued {
		j = &job{dest: d, reason: ReasonManual}
		m.enqueueLocked(j)
	}
	j.waiters = append(j.waiters, done)
	if progress != nil {
		j.progress = append(j.progress, progress)
	}
	m.dispatchLocked()
	m.mu.Unlock()
	select {
	case r := <-done:
		return r, r.Err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// CheckAll queues a check of every registered destination now ("Check all
// now"), behind the same caps as any other check: MaxConcurrent, one at a
// time per file server, the checker's lockout budget. A destination whose
// check is already waiting keeps that one. It does not wait for the
// checks; n is how many destinations will be checked.
func (m *Monitor) CheckAll(ctx context.Context) (n int, err error) {
	m.refresh(ctx, true)
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closing {
		return 0, errors.New("scanwarden is stopping")
	}
	names := make([]string, 0, len(m.dests))
	for k := range m.dests {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		n++
		// Its regular interval runs from this check.
		m.nextDue[k] = now.Add(m.cfg.Interval + m.jitter())
		if _, queued := m.byDest[k]; queued {
			continue
		}
		m.enqueueLocked(&job{dest: m.dests[k], reason: ReasonManual})
	}
	m.dispatchLocked()
	return n, nil
}

// Delivery puts a held scan's delivery (or its failure) on the
// destination's incident: a delivery that failed opens one like a failing
// check; a delivered scan is a line on the open incident's timeline.
func (m *Monitor) Delivery(ctx context.Context, destination string, delivered bool, text string) {
	m.mu.Lock()
	d, ok := m.dests[key(destination)]
	m.mu.Unlock()
	if !ok {
		d = Destination{Name: destination}
	}
	in := incident.Input{Kind: incident.KindDelivery, At: m.cfg.Now(), Destination: d.Name, Device: d.Device,
		Delivered: delivered, Text: text}
	if _, err := m.apply(context.WithoutCancel(ctx), d, []incident.Input{in}); err != nil {
		m.log.Warn("delivery not recorded on incident", "destination", destination, "err", err)
	}
}
