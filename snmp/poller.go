package snmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// PollerConfig tunes the poller. Zero fields take the defaults.
type PollerConfig struct {
	Workers        int           `json:"workers"`         // concurrent devices (default 32)
	Interval       time.Duration `json:"interval"`        // between cycle starts (default 60s)
	MaxRepetitions int           `json:"max_repetitions"` // GETBULK rows per column (default 8)
	IdentifyEvery  time.Duration `json:"identify_every"`  // re-read inventory (default 24h)
	BackoffMax     time.Duration `json:"backoff_max"`     // longest pause for a silent device (default 30m)
	RescanEvery    int           `json:"rescan_every"`    // read the job table from the top every N polls (default 10)
}

func (c PollerConfig) withDefaults() PollerConfig {
	if c.Workers <= 0 {
		c.Workers = 32
	}
	if c.Interval <= 0 {
		c.Interval = time.Minute
	}
	if c.MaxRepetitions <= 0 {
		c.MaxRepetitions = 8
	}
	if c.IdentifyEvery <= 0 {
		c.IdentifyEvery = 24 * time.Hour
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 30 * time.Minute
	}
	if c.RescanEvery <= 0 {
		c.RescanEvery = 10
	}
	return c
}

// Validate names the bad field.
func (c PollerConfig) Validate() error {
	switch {
	case c.Workers < 0 || c.Workers > 1024:
		return fmt.Errorf("poller: workers %d out of range (0..1024)", c.Workers)
	case c.Interval < 0 || (c.Interval > 0 && c.Interval < time.Second):
		return fmt.Errorf("poller: interval %s below 1s", c.Interval)
	case c.MaxRepetitions < 0 || c.MaxRepetitions > 50:
		return fmt.Errorf("poller: max_repetitions %d out of range (0..50)", c.MaxRepetitions)
	case c.BackoffMax < 0:
		return fmt.Errorf("poller: backoff_max %s is negative", c.BackoffMax)
	}
	return nil
}

// CycleStats are one poll cycle's figures.
type CycleStats struct {
	Started   time.Time     `json:"started"`
	Duration  time.Duration `json:"duration_ns"`
	Devices   int           `json:"devices"`    // known devices
	Polled    int           `json:"polled"`     // asked this cycle
	Answered  int           `json:"answered"`   // answered
	Silent    int           `json:"silent"`     // did not answer (back-off grows)
	Failed    int           `json:"failed"`     // answered but the poll failed otherwise
	Deferred  int           `json:"deferred"`   // skipped: still in back-off
	PDUs      int64         `json:"pdus"`       // requests sent, retries included
	Events    int           `json:"events"`     // events found
	NewEvents int           `json:"new_events"` // of which fresh (not duplicates)
	Cancelled bool          `json:"cancelled"`
}

// PDUsPerDevice is PDUs over polled devices.
func (s CycleStats) PDUsPerDevice() float64 {
	if s.Polled == 0 {
		return 0
	}
	return float64(s.PDUs) / float64(s.Polled)
}

// Poller polls many devices in cycles with a fixed pool of workers, each
// owning one gosnmp client.
type Poller struct {
	cfg   PollerConfig
	rules *Rules
	rec   *Recorder
	log   *slog.Logger
	now   func() time.Time

	mu      sync.Mutex
	devices map[string]*deviceState
	order   []string
	clients []*client

	cycleMu sync.Mutex // one cycle at a time
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// NewPoller returns a poller; call SetTargets, then Cycle or Open.
func NewPoller(cfg PollerConfig, rules *Rules, rec *Recorder, log *slog.Logger) (*Poller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log, err := partLog("poller", "snmp.poller", rules, rec, log)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	p := &Poller{cfg: cfg, rules: rules, rec: rec, log: log, now: time.Now,
		devices: map[string]*deviceState{}}
	for i := 0; i < cfg.Workers; i++ {
		p.clients = append(p.clients, newClient())
	}
	return p, nil
}

// SetTargets replaces the device list, keeping what is known of devices
// that stay.
func (p *Poller) SetTargets(ts []Target) error {
	next := map[string]*deviceState{}
	var order []string
	for _, t := range ts {
		if err := t.Validate(); err != nil {
			return err
		}
		t = t.withDefaults()
		addr := t.Addr()
		if _, dup := next[addr]; dup {
			continue
		}
		p.mu.Lock()
		ds, ok := p.devices[addr]
		p.mu.Unlock()
		if !ok {
			ds = &deviceState{}
		}
		if ds.target.Version != t.Version || ds.target.V3 != t.V3 {
			ds.v3 = v3State{}
		}
		ds.target = t
		next[addr] = ds
		order = append(order, addr)
	}
	p.mu.Lock()
	p.devices, p.order = next, order
	p.mu.Unlock()
	return nil
}

// Cycle polls every device that is not in back-off once, and returns the
// cycle's figures. Cancelling ctx stops it early (Cancelled is set).
func (p *Poller) Cycle(ctx context.Context) (CycleStats, error) {
	p.cycleMu.Lock()
	defer p.cycleMu.Unlock()
	start := p.now()
	devs := p.snapshot()
	stats := CycleStats{Started: start, Devices: len(devs)}
	var due []*deviceState
	for _, ds := range devs {
		if !ds.nextPoll.After(start) {
			due = append(due, ds)
		}
	}
	stats.Deferred = len(devs) - len(due)

	for out := range p.pollAll(ctx, due) {
		p.record(ctx, &stats, out)
	}
	stats.Duration = p.now().Sub(start)
	stats.Cancelled = ctx.Err() != nil
	p.log.Debug("cycle", "devices", stats.Devices, "polled", stats.Polled, "answered", stats.Answered,
		"silent", stats.Silent, "pdus", stats.PDUs, "duration", stats.Duration, "new_events", stats.NewEvents)
	if stats.Cancelled {
		return stats, ctx.Err()
	}
	return stats, nil
}

// snapshot returns the devices in registration order, taken under the lock.
func (p *Poller) snapshot() []*deviceState {
	p.mu.Lock()
	defer p.mu.Unlock()
	devs := make([]*deviceState, len(p.order))
	for i, a := range p.order {
		devs[i] = p.devices[a]
	}
	return devs
}

// pollAll polls the due devices on up to cfg.Workers workers, each with its own client, and returns their
// outcomes; the channel is closed when every worker is done. Cancelling ctx stops handing out devices.
func (p *Poller) pollAll(ctx context.Context, due []*deviceState) <-chan pollOutcome {
	work := make(chan *deviceState)
	results := make(chan pollOutcome, p.cfg.Workers)
	opt := pollOptions{maxRep: p.cfg.MaxRepetitions, identifyEvery: p.cfg.IdentifyEvery, rescanEvery: p.cfg.RescanEvery}
	var wg sync.WaitGroup
	for i := 0; i < p.cfg.Workers && i < len(due); i++ {
		c := p.clients[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ds := range work {
				out := pollDevice(ctx, c, ds, p.rules, opt, p.now())
				p.backoff(ds, out.err)
				results <- out
			}
		}()
	}
	go func() {
		defer close(work)
		for _, ds := range due {
			select {
			case work <- ds:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	return results
}

// record counts one device's outcome into stats and records its inventory
// (or that it answered) and its events.
func (p *Poller) record(ctx context.Context, stats *CycleStats, out pollOutcome) {
	stats.Polled++
	stats.PDUs += out.pdus
	switch {
	case out.err == nil:
		stats.Answered++
	case isSilent(out.err):
		stats.Silent++
	case ctx.Err() != nil:
		// cancelled mid-poll: counted by the caller
	default:
		stats.Answered++
		stats.Failed++
		p.log.Warn("poll failed", "err", out.err)
	}
	if out.identified != nil {
		if err := p.rec.Device(ctx, *out.identified); err != nil && ctx.Err() == nil {
			p.log.Error("record device", "device", out.identified.Address, "err", err)
		}
	} else if out.err == nil && out.addr != "" {
		if err := p.rec.Seen(ctx, out.addr, out.at); err != nil && ctx.Err() == nil {
			p.log.Error("record device seen", "device", out.addr, "err", err)
		}
	}
	for _, ev := range out.events {
		stats.Events++
		fresh, err := p.rec.Event(ctx, ev)
		if err != nil {
			if ctx.Err() == nil {
				p.log.Error("record event", "device", ev.Device, "code", ev.Code, "err", err)
			}
			continue
		}
		if fresh {
			stats.NewEvents++
			p.log.Info("send failure", "device", ev.Device, "code", ev.Code, "source", ev.Source)
		}
	}
}

// backoff: a silent device waits Interval·2^(n-1) (capped at BackoffMax)
// before its next poll; an answer resets it.
func (p *Poller) backoff(ds *deviceState, err error) {
	if !isSilent(err) {
		ds.failures = 0
		ds.nextPoll = time.Time{}
		return
	}
	ds.failures++
	d := p.cfg.BackoffMax
	if ds.failures < 20 {
		if b := p.cfg.Interval << (ds.failures - 1); b < d {
			d = b
		}
	}
	if ds.failures == 1 {
		// One miss may be a lost packet: try again next cycle.
		ds.nextPoll = time.Time{}
		return
	}
	ds.nextPoll = p.now().Add(d)
}

// Run polls a cycle at once and then every Interval, until ctx ends or,
// when cycles > 0, that many cycles have run. After each cycle (a cancelled
// one included) it calls after, when not nil, with the cycle's figures. It
// returns nil when the cycles are done and ctx.Err() when ctx ended.
func (p *Poller) Run(ctx context.Context, cycles int, after func(CycleStats)) error {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for n := 1; ; n++ {
		st, err := p.Cycle(ctx)
		if err != nil && ctx.Err() == nil {
			p.log.Error("cycle", "err", err)
		}
		if after != nil {
			after(st)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if cycles > 0 && n >= cycles {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Open starts polling every Interval until Close or ctx ends.
func (p *Poller) Open(ctx context.Context) error {
	if p.cancel != nil {
		return errors.New("poller already open")
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.Run(ctx, 0, nil)
	}()
	return nil
}

// Close stops polling and waits for the running cycle to end.
func (p *Poller) Close() error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	p.wg.Wait()
	p.cancel = nil
	return nil
}
