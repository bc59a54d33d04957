package daemon

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// BridgeHealth is bridged destination d's own health (bridge.Judge) at
// now: the fallback share's last probe (share; nil: none runs), its
// backlog and scanwarden's own check of the real folder from its latest
// stored report — the one way serve's page, list, API and metric and the
// CLI's status and destination list read it.
func BridgeHealth(ctx context.Context, st *store.Store, d registry.Destination, share *samba.ShareHealth, now time.Time) (bridge.Health, error) {
	in := bridge.Inputs{Share: share}
	latest, ok, err := st.LatestReport(ctx, d.Name)
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
// the bridge does not deliver (the share down, a scan stuck).
func BridgeCheck(ctx context.Context, st *store.Store, share func() *samba.ShareHealth, name string, run func() smbcheck.Report) smbcheck.Report {
	rep := run()
	own := rep.Verdict
	rep.Bridge = &smbcheck.Bridge{Active: true, Own: &own}
	if st == nil || rep.Interrupted {
		return rep
	}
	in := bridge.Inputs{Own: &own, OwnAt: rep.Started}
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

// shareHealth is the running fallback share's last probe (nil: none runs,
// or none probed yet).
func (m *Main) shareHealth() *samba.ShareHealth {
	if m.recv == nil || m.recv.r == nil {
		return nil
	}
	return m.recv.r.ShareHealth()
}
