package daemon

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// BridgeHealth is bridged destination d's own health (bridge.Judge) at
// now: the fallback share's last probe (share; nil: none runs), its
// backlog and scanwarden's own check of the real folder from its latest
// stored report, a scan waiting longer than stuck ([receiver]
// bridge_stuck_after) failing it — the one way serve's page, list, API and
// metric and the CLI's status and destination list read it.
func BridgeHealth(ctx context.Context, st *store.Store, d registry.Destination, share *samba.ShareHealth, stuck time.Duration, now time.Time) (bridge.Health, error) {
	in := bridge.Inputs{Share: share, StuckAfter: stuck}
	latest, ok, err := st.Reports().LatestReport(ctx, d.Name)
	if err != nil {
		return bridge.Health{}, err
	}
	if ok {
		in.Own, in.OwnAt = OwnVerdict(latest.Report), latest.At
	}
	if in.Backlog, err = st.Scans().Backlog(ctx, d.Name); err != nil {
		return bridge.Health{}, err
	}
	return bridge.Judge(in, now), nil
}

// OwnVerdict is what scanwarden's own client found in rep (nil: rep is the
// device's check and says nothing of it): a bridged destination's check
// is scanwarden's own; a device's check that offered the bridge (or not)
// carries it in Bridge.Own.
func OwnVerdict(rep smbcheck.Report) *smbcheck.Verdict {
	switch b := rep.Bridge; {
	case b != nil && b.Own != nil:
		v := *b.Own
		return &v
	case b != nil && b.Active:
		v := rep.Verdict
		return &v
	}
	return nil
}

// BridgeCheck is a bridged destination's check — serve's and `check
// --destination`'s: scanwarden's own client on the real folder (run),
// then the bridge's own health (share: the fallback share's last probe);
// its verdict is the own check's, or bridge-failing when that passed but
// the bridge does not deliver (the share down, a scan waiting longer than
// stuck: [receiver] bridge_stuck_after).
func BridgeCheck(ctx context.Context, st *store.Store, share func() *samba.ShareHealth, stuck time.Duration, name string, run func() smbcheck.Report) smbcheck.Report {
	rep := run()
	own := rep.Verdict
	rep.Bridge = &smbcheck.Bridge{Active: true, Own: &own}
	if st == nil || rep.Interrupted {
		return rep
	}
	in := bridge.Inputs{Own: &own, OwnAt: rep.Started, StuckAfter: stuck}
	if share != nil {
		in.Share = share()
	}
	bl, err := st.Scans().Backlog(ctx, name)
	if err != nil {
		rep.Bridge.Message = "bridged; its deliveries could not be read: " + err.Error()
		return rep
	}
	in.Backlog = bl
	h := bridge.Judge(in, time.Now())
	rep.Bridge.Message = h.Line(time.Now())
	if rep.OK() && !h.OK() {
		rep.Verdict = h.Verdict()
	}
	return rep
}

// shareHealth is the running fallback share's last probe (nil: none runs
// — p nil — or none probed yet).
func (p *receiverPart) shareHealth() *samba.ShareHealth {
	if p == nil || p.r == nil {
		return nil
	}
	return p.r.ShareHealth()
}

// bridgeStuck is the running config's [receiver] bridge_stuck_after
// (bridge.StuckAfter while a reload swaps the parts).
func (m *Main) bridgeStuck() time.Duration {
	if p := m.live.get(); p != nil {
		return p.cfg.Receiver.BridgeStuckAfter.D()
	}
	return bridge.StuckAfter
}

// bridgeCollector exports each bridged destination's own health at
// scrape time: whether its bridge works, and how long its oldest
// undelivered scan has waited.
type bridgeCollector struct{ m *Main }

var (
	bridgeOKDesc = prometheus.NewDesc("scanwarden_bridge_ok",
		"1 when a bridged destination's bridge works (share serving, own check green, no scan stuck), 0 when it fails.", []string{"destination"}, nil)
	bridgeWaitingDesc = prometheus.NewDesc("scanwarden_bridge_oldest_waiting_seconds",
		"Age of a bridged destination's oldest undelivered scan (0: none waits).", []string{"destination"}, nil)
)

func (c *bridgeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- bridgeOKDesc
	ch <- bridgeWaitingDesc
}

func (c *bridgeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ds, err := c.m.st.Destinations().Destinations(ctx, "")
	if err != nil {
		return
	}
	share, stuck, now := c.m.recv.shareHealth(), c.m.bridgeStuck(), time.Now()
	for _, d := range ds {
		if !d.Bridged() {
			continue
		}
		h, err := BridgeHealth(ctx, c.m.st, d, share, stuck, now)
		if err != nil {
			return
		}
		ok := 0.0
		if h.OK() {
			ok = 1
		}
		ch <- prometheus.MustNewConstMetric(bridgeOKDesc, prometheus.GaugeValue, ok, d.Name)
		ch <- prometheus.MustNewConstMetric(bridgeWaitingDesc, prometheus.GaugeValue, float64(h.OldestAge), d.Name)
	}
}
