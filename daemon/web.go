package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

// webBackend implements the interfaces package web declares, over the
// store, the registry and the running monitor. Nothing here carries a
// secret: destinations say only whether a password is stored.
type webBackend struct{ m *Main }

var (
	_ web.Fleet     = webBackend{}
	_ web.Checker   = webBackend{}
	_ web.Incidents = webBackend{}
	_ web.Events    = webBackend{}
	_ web.Status    = webBackend{}
)

func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNoIncident) || errors.Is(err, monitor.ErrUnknownDestination) {
		return fmt.Errorf("%w: %v", web.ErrNotFound, err)
	}
	return err
}

// inventory is what the poller last read of each device, by SNMP address.
func (b webBackend) inventory(ctx context.Context) (map[string]snmp.Inventory, error) {
	invs, err := b.m.st.Events().SNMPDevices(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]snmp.Inventory{}
	for _, i := range invs {
		out[registry.Address(i.Address).SNMPAddr()] = i
	}
	return out, nil
}

// deviceView is d as shown, with its inventory when the poller has one.
func (b webBackend) deviceView(d registry.Device, inv map[string]snmp.Inventory) registry.DeviceView {
	var seen *snmp.Inventory
	if i, ok := inv[d.SNMPAddr()]; ok && d.Address != "" {
		seen = &i
	}
	return d.View(seen, b.m.snmpInterval())
}

// snmpInterval is the running poll interval.
func (m *Main) snmpInterval() time.Duration {
	if p := m.live.get(); p != nil {
		return p.cfg.SNMP.Interval.D()
	}
	return time.Minute
}

// Devices implements web.Fleet.
func (b webBackend) Devices(ctx context.Context) ([]registry.DeviceView, error) {
	devs, err := b.m.st.Devices().Devices(ctx)
	if err != nil {
		return nil, err
	}
	inv, err := b.inventory(ctx)
	if err != nil {
		return nil, err
	}
	ds, err := b.m.st.Destinations().Destinations(ctx, "")
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, d := range ds {
		count[strings.ToLower(d.Device)]++
	}
	out := make([]registry.DeviceView, 0, len(devs))
	for _, d := range devs {
		wd := b.deviceView(d, inv)
		wd.DestinationCount = count[strings.ToLower(d.Name)]
		out = append(out, wd)
	}
	return out, nil
}

// Device implements web.Fleet.
func (b webBackend) Device(ctx context.Context, name string) (registry.DeviceView, error) {
	d, err := b.m.st.Devices().Device(ctx, name)
	if err != nil {
		return registry.DeviceView{}, notFound(err)
	}
	inv, err := b.inventory(ctx)
	if err != nil {
		return registry.DeviceView{}, err
	}
	wd := b.deviceView(d, inv)
	dests, err := b.destinations(ctx, d.Name)
	if err != nil {
		return registry.DeviceView{}, err
	}
	wd.Destinations, wd.DestinationCount = dests, len(dests)
	return wd, nil
}

// withBridge adds d's bridge's own health, when it is bridged.
func (b webBackend) withBridge(ctx context.Context, wd *registry.DestinationView, d registry.Destination, share *samba.ShareHealth, now time.Time) error {
	if !d.Bridged() {
		return nil
	}
	h, err := BridgeHealth(ctx, b.m.st, d, share, b.m.bridgeStuck(), now)
	if err != nil {
		return err
	}
	wd.Bridge = &h
	return nil
}

func (b webBackend) openIncidents(ctx context.Context) (map[string]int64, error) {
	incs, err := b.m.st.Incidents().Incidents(ctx, store.IncidentFilter{State: incident.StateOpen, Limit: 100_000})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, i := range incs {
		out[strings.ToLower(i.Destination)] = i.ID
	}
	return out, nil
}

func (b webBackend) destinations(ctx context.Context, device string) ([]registry.DestinationView, error) {
	ds, err := b.m.st.Destinations().Destinations(ctx, device)
	if err != nil {
		return nil, notFound(err)
	}
	open, err := b.openIncidents(ctx)
	if err != nil {
		return nil, err
	}
	latest, err := b.m.st.Reports().LatestVerdicts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]registry.DestinationView, 0, len(ds))
	share, now := b.m.recv.shareHealth(), time.Now()
	for _, d := range ds {
		wd := d.View()
		if err := b.withBridge(ctx, &wd, d, share, now); err != nil {
			return nil, err
		}
		if v, ok := latest[strings.ToLower(d.Name)]; ok {
			wd.Last = &registry.ReportView{At: v.At, Verdict: v.Verdict, WorkingForm: v.WorkingForm}
		}
		wd.OpenIncident = open[strings.ToLower(d.Name)]
		out = append(out, wd)
	}
	return out, nil
}

// Destinations implements web.Fleet.
func (b webBackend) Destinations(ctx context.Context) ([]registry.DestinationView, error) {
	return b.destinations(ctx, "")
}

// Destination implements web.Fleet.
func (b webBackend) Destination(ctx context.Context, name string) (registry.DestinationView, error) {
	d, err := b.m.st.Destinations().Destination(ctx, name)
	if err != nil {
		return registry.DestinationView{}, notFound(err)
	}
	wd := d.View()
	if r, ok, err := b.m.st.Reports().LatestReport(ctx, d.Name); err != nil {
		return registry.DestinationView{}, err
	} else if ok {
		last := r.View()
		wd.Last = &last
		rep := r.Report
		wd.Report = &rep
	}
	open, err := b.openIncidents(ctx)
	if err != nil {
		return registry.DestinationView{}, err
	}
	wd.OpenIncident = open[strings.ToLower(d.Name)]
	now := time.Now()
	if err := b.withBridge(ctx, &wd, d, b.m.recv.shareHealth(), now); err != nil {
		return registry.DestinationView{}, err
	}
	if e, err := b.m.st.History().Pattern(ctx, store.Of{Destination: d.Name}, now); err == nil {
		wd.Pattern = e.Sentence
	}
	if e, err := b.m.st.History().Pattern(ctx, store.Of{Host: d.Host}, now); err == nil {
		wd.ServerPattern = e.Sentence
	}
	return wd, nil
}

// History implements web.Fleet.
func (b webBackend) History(ctx context.Context, name string, limit int) ([]registry.ReportView, error) {
	rs, err := b.m.st.Reports().Reports(ctx, name, limit)
	if err != nil {
		return nil, notFound(err)
	}
	out := make([]registry.ReportView, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.View())
	}
	return out, nil
}

// Check implements web.Checker: a check now, behind the monitor's caps,
// stored and applied to the incident like any other.
func (b webBackend) Check(ctx context.Context, destination string, progress func(smbcheck.Step)) (smbcheck.Report, error) {
	mon := b.m.Monitor()
	if mon == nil {
		return smbcheck.Report{}, errors.New("the scheduler is not running (see the faults)")
	}
	res, err := mon.CheckNow(ctx, destination, progress)
	if err != nil {
		return smbcheck.Report{}, notFound(err)
	}
	return res.Report, nil
}

// Incidents implements web.Incidents: newest first, each with its timeline
// (the newest 200 entries).
func (b webBackend) Incidents(ctx context.Context, state string, limit int) ([]incident.View, error) {
	switch state {
	case "", "open", "closed":
	default:
		return nil, fmt.Errorf("state %q: open, closed or empty", state)
	}
	incs, err := b.m.st.Incidents().Incidents(ctx, store.IncidentFilter{State: incident.State(state), Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]incident.View, 0, len(incs))
	for _, i := range incs {
		tl, err := b.m.st.Incidents().Timeline(ctx, i.ID, 200)
		if err != nil {
			return nil, err
		}
		out = append(out, i.View(tl))
	}
	return out, nil
}

// Incident implements web.Incidents.
func (b webBackend) Incident(ctx context.Context, id int64) (incident.View, error) {
	i, err := b.m.st.Incidents().Incident(ctx, id)
	if err != nil {
		return incident.View{}, notFound(err)
	}
	tl, err := b.m.st.Incidents().Timeline(ctx, id, 0)
	if err != nil {
		return incident.View{}, err
	}
	wi := i.View(tl)
	if e, err := b.m.st.History().Pattern(ctx, store.Of{Destination: i.Destination}, time.Now()); err == nil {
		wi.Pattern = e.Sentence
	}
	return wi, nil
}

// Events implements web.Events. device is a registry device name (or an
// address); events name the device by the name when it is registered.
// Unverified events (sender not proven to be the device) keep the sender's
// address as it was stored: they are never given a registered device's name.
func (b webBackend) Events(ctx context.Context, q web.EventQuery) ([]incident.EventView, error) {
	device, limit := q.Device, q.Limit
	devs, err := b.m.st.Devices().Devices(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	addr := device
	for _, d := range devs {
		if d.Address == "" {
			continue
		}
		names[d.SNMPAddr()] = d.Name
		if device != "" && strings.EqualFold(d.Name, device) {
			addr = d.SNMPAddr()
		}
	}
	f := store.SNMPEventFilter{Device: addr, Limit: limit}
	switch q.Which {
	case web.EventsVerified:
		f.Unverified = new(false)
	case web.EventsUnverified:
		f.Unverified = new(true)
	}
	evs, err := b.m.st.Events().ListSNMPEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]incident.EventView, 0, len(evs))
	for _, e := range evs {
		dev := e.Device
		if n, ok := names[registry.Address(e.Device).SNMPAddr()]; ok && !e.Unverified {
			dev = n
		}
		out = append(out, e.View(dev))
	}
	return out, nil
}

// Faults implements web.Status.
func (b webBackend) Faults(context.Context) ([]scanwarden.Fault, error) {
	return b.m.faults.list(), nil
}
