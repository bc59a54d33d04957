package daemon

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/evidence"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/serverlog"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// What serve hands the monitor from the store.
var (
	_ monitor.Registry = (*fleet)(nil)
	_ monitor.Sweeps   = eventSweeps{}
	_ monitor.Reports  = reports{}
)

// fleet reads the registry from the store for the monitor.
type fleet struct {
	devs  *store.Devices
	dests *store.Destinations
	reps  *store.Reports
	mu    sync.Mutex
	seen  map[string]bool // destinations whose last check was looked up
}

func newFleet(st *store.Store) *fleet {
	return &fleet{devs: st.Devices(), dests: st.Destinations(), reps: st.Reports(), seen: map[string]bool{}}
}

func toMonitor(r registry.Resolved) monitor.Destination {
	return monitor.Destination{Name: r.Name, Device: r.Destination.Device, Target: r.Target, PasswordUnreadable: r.PasswordUnreadable,
		Client: r.Client, Profile: r.Profile, Bridged: r.Bridged()}
}

// Destinations implements monitor.Registry.
func (f *fleet) Destinations(ctx context.Context) ([]monitor.Destination, error) {
	rs, err := f.dests.Targets(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]monitor.Destination, 0, len(rs))
	for _, r := range rs {
		md := toMonitor(r)
		k := strings.ToLower(r.Name)
		f.mu.Lock()
		first := !f.seen[k]
		f.seen[k] = true
		f.mu.Unlock()
		if first {
			if rep, ok, err := f.reps.LatestReport(ctx, r.Name); err == nil && ok {
				md.LastCheck, md.LastVerdict = rep.At, smbcheck.Verdict{Cause: rep.Cause, KyoceraCode: rep.KyoceraCode, Summary: rep.Summary}
			}
		}
		out = append(out, md)
	}
	return out, nil
}

// Match implements monitor.Registry: the event's device is the registered
// device polled at that address; the destination it names is matched by
// host, share and path (see matchDestination); an event that names none
// concerns every destination of its device.
func (f *fleet) Match(ctx context.Context, ev snmp.Event) ([]monitor.Destination, error) {
	devs, err := f.devs.Devices(ctx)
	if err != nil {
		return nil, err
	}
	devName := ""
	for _, d := range devs {
		if registry.Address(d.Address).Same(registry.Address(ev.Device)) {
			devName = d.Name
			break
		}
	}
	all, err := f.dests.Targets(ctx, "")
	if err != nil {
		return nil, err
	}
	byName := make(map[string]registry.Resolved, len(all))
	var mine, every []registry.Destination
	for _, r := range all {
		byName[r.Name] = r
		every = append(every, r.Destination)
		if devName != "" && strings.EqualFold(r.Destination.Device, devName) {
			mine = append(mine, r.Destination)
		}
	}
	var out []monitor.Destination
	if ev.Destination == "" {
		for _, d := range mine {
			out = append(out, toMonitor(byName[d.Name]))
		}
		return out, nil
	}
	// The device's own destinations first; a destination text that names
	// another device's destination still concerns that one.
	for _, set := range [][]registry.Destination{mine, every} {
		for _, d := range registry.Match(ev.Destination, set) {
			out = append(out, toMonitor(byName[d.Name]))
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

// eventSweeps keeps what the checks after a device failure naming no
// destination found with the stored event (monitor.Sweeps).
type eventSweeps struct{ ev *store.Events }

func (e eventSweeps) RecordSweep(ctx context.Context, ev snmp.Event, s incident.Sweep) error {
	return e.ev.SetEventSweep(ctx, ev, s)
}

// checker runs smbcheck with the daemon's ledger and directory.
type checker struct {
	opts    smbcheck.Options
	readers evidence.Readers // [eventlog]: the servers' own story after each check
	// bridged destinations' health: their deliveries (st) and the
	// fallback share's last probe (share; nil: no share runs)
	st    *store.Store
	share func() *samba.ShareHealth
	stuck time.Duration // [receiver] bridge_stuck_after
}

// Check implements monitor.Checker: as the destination's device would
// (its stored profile; zero: scanwarden's own client) — and where that
// fails on a cause of the device's client, once more with scanwarden's
// own to offer the bridge (smbcheck.RunWithOwn). A bridged destination's
// check is the bridge's own (bridgeCheck).
func (c checker) Check(ctx context.Context, d monitor.Destination, progress func(smbcheck.Step)) smbcheck.Report {
	o := c.opts
	o.Progress, o.Device, o.Profile = progress, d.Client, d.Profile
	// An admin's check asks the server afresh (and refreshes the memory
	// the scheduled checks share); a scheduled one uses what is remembered.
	o.LowestSince = d.AskedAt
	var rep smbcheck.Report
	if d.Bridged {
		rep = BridgeCheck(ctx, c.st, c.share, c.stuck, d.Name, func() smbcheck.Report { return smbcheck.Run(ctx, d.Target, o) })
	} else {
		rep = smbcheck.RunWithOwn(ctx, d.Target, o)
		rep.Bridge.Named(d.Name)
	}
	c.readers.Attach(ctx, d.Target, &rep)
	return rep
}

// eventlogReaders are [eventlog]'s reading accounts.
func eventlogReaders(e config.Eventlog) evidence.Readers {
	r := evidence.Readers{Before: e.Before.D(), Gate: evidence.NewGate()}
	if e.User != "" {
		a := evidence.Account(e.User, e.Password)
		r.Default = &a
	}
	for host, a := range e.ServerAccounts {
		if r.Servers == nil {
			r.Servers = map[string]serverlog.Account{}
		}
		r.Servers[host] = evidence.Account(a.User, a.Password)
	}
	return r
}

// reports adapts the store's report history to monitor.Reports.
type reports struct{ st *store.Store }

func (r reports) AddReport(ctx context.Context, dest string, rep smbcheck.Report) (int64, error) {
	if err := r.st.Reports().AddReport(ctx, dest, rep); err != nil {
		return 0, err
	}
	latest, ok, err := r.st.Reports().LatestReport(ctx, dest)
	if err != nil || !ok {
		return 0, err
	}
	return latest.ID, nil
}
