package daemon

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
)

// fleet reads the registry from the store for the monitor.
type fleet struct {
	st   *store.Store
	mu   sync.Mutex
	seen map[string]bool // destinations whose last check was looked up
}

func newFleet(st *store.Store) *fleet { return &fleet{st: st, seen: map[string]bool{}} }

func (f *fleet) devices(ctx context.Context) (map[string]registry.Device, error) {
	ds, err := f.st.Devices(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]registry.Device, len(ds))
	for _, d := range ds {
		m[strings.ToLower(d.Name)] = d
	}
	return m, nil
}

func toMonitor(d registry.Destination, devs map[string]registry.Device) monitor.Destination {
	var dev *registry.Device
	if x, ok := devs[strings.ToLower(d.Device)]; ok {
		dev = &x
	}
	return monitor.Destination{Name: d.Name, Device: d.Device, Target: d.Target(dev), PasswordUnreadable: d.PasswordUnreadable}
}

// Destinations implements monitor.Registry.
func (f *fleet) Destinations(ctx context.Context) ([]monitor.Destination, error) {
	devs, err := f.devices(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := f.st.Destinations(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]monitor.Destination, 0, len(ds))
	for _, d := range ds {
		md := toMonitor(d, devs)
		k := strings.ToLower(d.Name)
		f.mu.Lock()
		first := !f.seen[k]
		f.seen[k] = true
		f.mu.Unlock()
		if first {
			if r, ok, err := f.st.LatestReport(ctx, d.Name); err == nil && ok {
				md.LastCheck = r.At
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
	devs, err := f.devices(ctx)
	if err != nil {
		return nil, err
	}
	devName := ""
	for _, d := range devs {
		if d.Address != "" && sameAddress(d.Address, ev.Device) {
			devName = d.Name
			break
		}
	}
	all, err := f.st.Destinations(ctx, "")
	if err != nil {
		return nil, err
	}
	var mine []registry.Destination
	for _, d := range all {
		if devName != "" && strings.EqualFold(d.Device, devName) {
			mine = append(mine, d)
		}
	}
	var out []monitor.Destination
	if ev.Destination == "" {
		for _, d := range mine {
			out = append(out, toMonitor(d, devs))
		}
		return out, nil
	}
	// The device's own destinations first; a destination text that names
	// another device's destination still concerns that one.
	for _, set := range [][]registry.Destination{mine, all} {
		for _, d := range registry.Match(ev.Destination, set) {
			out = append(out, toMonitor(d, devs))
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, nil
}

// sameAddress compares HOST[:PORT] forms, 161 being the default port.
func sameAddress(a, b string) bool {
	norm := func(s string) string {
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			h, p = strings.Trim(s, "[]"), strconv.Itoa(snmp.DefaultPort)
		}
		return strings.ToLower(h) + ":" + p
	}
	return norm(a) == norm(b)
}

// checker runs smbcheck with the daemon's ledger and directory.
type checker struct {
	opts smbcheck.Options
}

// Check implements monitor.Checker.
func (c checker) Check(ctx context.Context, t smbcheck.Target, progress func(smbcheck.Step)) smbcheck.Report {
	o := c.opts
	o.Progress = progress
	return smbcheck.Run(ctx, t, o)
}

// reports adapts the store's report history to monitor.Reports.
type reports struct{ st *store.Store }

func (r reports) AddReport(ctx context.Context, dest string, rep smbcheck.Report) (int64, error) {
	if err := r.st.AddReport(ctx, dest, rep); err != nil {
		return 0, err
	}
	latest, ok, err := r.st.LatestReport(ctx, dest)
	if err != nil || !ok {
		return 0, err
	}
	return latest.ID, nil
}
