package daemon

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/resolve"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// watchPart is the SNMP watch loop over the registry's devices, with its
// trap and mail listeners. Nothing to watch yet: no loop until Sync finds
// a device. It is opened, and reopened by Sync, under the run context
// Open was given — never a caller's (a web import's request).
type watchPart struct {
	env
	cfg   config.Config
	event func(context.Context, snmp.Event) // a fresh send failure
	names *resolve.Cache                    // the devices' names: last good addresses, kept across reloads

	mu     sync.Mutex
	ctx    context.Context // the run context
	rules  *snmp.Rules
	w      *snmp.Watcher // nil: nothing to watch, or it could not start
	key    string        // the device list watched, to see a change
	closed bool
	// listenErr is the first trap or mail listener that could not bind
	// (*BindError): fatal when serve starts, a fault after a reload.
	listenErr error
}

// Open loads the rules and starts the loop over the devices registered
// now under ctx, the run context. What fails is a fault.
func (p *watchPart) Open(ctx context.Context) {
	for _, part := range []string{"snmp", "snmp.traps", "snmp.mail", "snmp.rules"} {
		p.faults.clear(part)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctx = ctx
	p.rules = p.loadRules()
	targets, key, err := p.targets(ctx)
	if err != nil {
		p.faults.set("store", err.Error())
	}
	p.key = key
	p.w = p.open(targets)
}

// Sync re-reads the registry's devices (ctx bounds the reading) and sets
// the watched list, or opens the loop when there was none. When the list
// is unchanged the devices' names are looked up again (outside the lock:
// Close does not wait for DNS).
func (p *watchPart) Sync(ctx context.Context) {
	if w := p.sync(ctx); w != nil {
		w.ResolveNames(ctx)
	}
}

// sync is Sync under the lock; it returns the loop when the list is
// unchanged.
func (p *watchPart) sync(ctx context.Context) *snmp.Watcher {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	targets, key, err := p.targets(ctx)
	if err != nil {
		p.faults.set("store", err.Error())
		return nil
	}
	if key == p.key {
		return p.w
	}
	p.key = key
	if p.w != nil {
		if err := p.w.SetTargets(targets); err != nil {
			p.faults.set("snmp", err.Error())
		}
		return nil
	}
	p.w = p.open(targets)
	return nil
}

// Close stops the loop and its listeners.
func (p *watchPart) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.w != nil {
		p.w.Close()
	}
}

// watcher is the running loop (nil: none).
func (p *watchPart) watcher() *snmp.Watcher {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.w
}

// loadRules reads [snmp] rules_file; the built-in rules when none, or
// when it cannot be used (the "snmp.rules" fault).
func (p *watchPart) loadRules() *snmp.Rules {
	book := snmp.DefaultCodeBook()
	if p.cfg.SNMP.RulesFile == "" {
		return snmp.DefaultRules(book)
	}
	f, err := os.Open(p.cfg.SNMP.RulesFile)
	if err != nil {
		p.faults.set("snmp.rules", err.Error())
		return snmp.DefaultRules(book)
	}
	defer f.Close()
	r, err := snmp.ParseRules(f, book, nil)
	if err != nil {
		p.faults.set("snmp.rules", "default rules used: "+err.Error())
		return snmp.DefaultRules(book)
	}
	return r
}

// targets are the registry's devices that have an SNMP address, with
// their credentials (the config's community when a device has none), and
// a key that changes with the list.
func (p *watchPart) targets(ctx context.Context) ([]snmp.Target, string, error) {
	devs, err := p.st.Devices().Devices(ctx)
	if err != nil {
		return nil, "", err
	}
	var ts []snmp.Target
	var keys []string
	for _, d := range devs {
		if d.Address == "" {
			continue
		}
		t, err := d.SNMPTarget(p.cfg.SNMP.Community)
		if err != nil {
			p.log.Warn("device address not polled", "device", d.Name, "err", err)
			continue
		}
		if err := t.Validate(); err != nil {
			p.log.Warn("device not polled", "device", d.Name, "err", err)
			continue
		}
		ts = append(ts, t)
		keys = append(keys, t.Addr()+"/"+string(t.Version)+"/"+d.SNMP.V3User)
	}
	return ts, strings.Join(keys, ","), nil
}

// watcherConfig is the loop's configuration for targets. The error is an
// [snmp] cidr or allow entry that does not parse (validated with the
// config: it is never left out all the same).
func (p *watchPart) watcherConfig(targets []snmp.Target) (snmp.WatcherConfig, error) {
	cfg := p.cfg
	wc := snmp.DefaultWatcherConfig()
	networks, err := cfg.SNMP.Networks()
	if err != nil {
		return wc, err
	}
	allow, err := cfg.SNMP.AllowNets()
	if err != nil {
		return wc, err
	}
	wc.Targets, wc.Networks = targets, networks
	wc.Poller.Interval = cfg.SNMP.Interval.D()
	wc.SweepTarget = snmp.Target{Version: snmp.V2c, Community: cfg.SNMP.Community, Timeout: snmp.DefaultTimeout, Retries: snmp.DefaultRetries}
	var comms []scanwarden.Secret
	if !cfg.SNMP.TrapCommunity.IsZero() {
		comms = append(comms, cfg.SNMP.TrapCommunity)
	}
	wc.Listen(snmp.Listeners{TrapAddr: cfg.SNMP.TrapListen, Communities: comms, User: cfg.SNMP.TrapV3(),
		SMTPAddr: cfg.SNMP.SMTPListen, Allow: allow, Replay: p.st.Replay()})
	wc.Rules = p.rules
	// Stored, then told to the monitor; a store error is the "store"
	// fault (not one that only says the watch is stopping).
	wc.Store, wc.OnEvent = p.st.Events().SNMP(store.DefaultDedupWindow), p.event
	wc.OnStoreError = func(err error) {
		// the store wraps the context's error with the operation
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			p.faults.set("store", err.Error())
		}
	}
	wc.Log = p.log.With("component", "snmp")
	wc.Names = p.names
	wc.OnCycle = p.metrics.cycle
	return wc, nil
}

// open starts the loop under the run context (nil when there is nothing
// to watch yet). A listener that cannot bind is a fault; the loop then
// runs without it.
func (p *watchPart) open(targets []snmp.Target) *snmp.Watcher {
	wc, err := p.watcherConfig(targets)
	if err != nil {
		p.faults.set("snmp", err.Error())
		p.log.Error("SNMP watch not running", "err", err)
		return nil
	}
	for attempt := 0; attempt < 3; attempt++ {
		if len(wc.Targets) == 0 && len(wc.Networks) == 0 && wc.Traps == nil && wc.Mail == nil {
			return nil
		}
		w, err := snmp.NewWatcher(wc)
		if err == nil {
			err = w.Open(p.ctx)
		}
		if err == nil {
			p.faults.clear("snmp")
			return w
		}
		var le *snmp.ListenError
		if errors.As(err, &le) && p.listenErr == nil {
			key, proto := "snmp.smtp_listen", "tcp"
			if le.Listener == "traps" {
				key, proto = "snmp.trap_listen", "udp"
			}
			p.listenErr = bindError(key, proto, le.Addr, le.Err)
		}
		switch {
		case errors.As(err, &le) && le.Listener == "traps":
			p.faults.set("snmp.traps", err.Error())
			p.log.Error("SNMP trap listener not running", "err", err)
			wc.Traps = nil
		case errors.As(err, &le):
			p.faults.set("snmp.mail", err.Error())
			p.log.Error("SMTP listener for device mail not running", "err", err)
			wc.Mail = nil
		default:
			p.faults.set("snmp", err.Error())
			p.log.Error("SNMP watch not running", "err", err)
			return nil
		}
	}
	return nil
}
