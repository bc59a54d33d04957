package monitor

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
)

// Groups keeps the incident groups: fn (incident.Regroup bound to one
// destination) runs on the open and recently closed groups in one
// transaction (store.Incidents.UpdateIncidentGroups).
type Groups interface {
	UpdateIncidentGroups(ctx context.Context, fn func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice)) ([]incident.GroupNotice, error)
	// IncidentGroup reads one group as it is now.
	IncidentGroup(ctx context.Context, id int64) (incident.Group, bool, error)
}

// GroupNotifier tells the admin once that a group opened or closed; inc is
// the incident of the destination whose change did it.
type GroupNotifier interface {
	NotifyGroup(ctx context.Context, n incident.GroupNotice, inc incident.Incident)
}

// regroup moves d into the group its last failing check names, out of its
// group once its incident is closed or its cause is its own, and notifies
// each group opened or closed. It reports whether d's own incident changes
// are covered by a group (it is in one, or it left one as its incident
// closed): those are not notified on their own.
func (k *desk) regroup(ctx context.Context, d Destination, ins []incident.Input, inc incident.Incident, now time.Time) bool {
	if k.cfg.Groups == nil {
		return false
	}
	var key *incident.Key
	decided := !inc.Open()
	if inc.Open() {
		for _, in := range ins {
			if in.Kind == incident.KindCheck && in.Verdict.Cause != scanwarden.CauseOK {
				key, decided = in.Group, true
			}
		}
	}
	grouped := false
	notices, err := k.cfg.Groups.UpdateIncidentGroups(ctx, func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice) {
		before := incident.GroupOf(gs, d.Name) != nil
		if !decided {
			grouped = before // a green check or a device failure keeps it where it is
			return nil, nil
		}
		grouped = key != nil || (before && !inc.Open())
		return incident.Regroup(gs, d.Name, key, now)
	})
	if err != nil {
		k.fault("group incident of "+d.Name, err)
		return false
	}
	for _, n := range notices {
		k.log.Info("incident group "+string(n.Change), "group", n.Group.ID, "cause", n.Group.Cause, "subject", n.Group.Subject,
			"destinations", len(n.Group.Members))
		if k.cfg.GroupNotifier == nil {
			continue
		}
		n := n
		k.out.send(func(nctx context.Context) { k.cfg.GroupNotifier.NotifyGroup(nctx, k.settle(nctx, n), inc) })
	}
	return grouped
}

// settle holds a group's opening notice while checks are still queued or
// running (the rest of a round that may find the same cause on more
// destinations), at most GroupSettle, and returns it with the group's
// members then. A destination failing alone is told of at once; a shutdown
// sends it at once.
func (k *desk) settle(ctx context.Context, n incident.GroupNotice) incident.GroupNotice {
	if k.cfg.GroupSettle <= 0 || (n.Change != incident.Opened && n.Change != incident.Reopened) {
		return n
	}
	capT := time.NewTimer(k.cfg.GroupSettle)
	defer capT.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		if !k.busy() {
			break
		}
		select {
		case <-k.stop:
			return n
		case <-ctx.Done():
			return n
		case <-capT.C:
			break wait
		case <-tick.C:
		}
	}
	g, ok, err := k.cfg.Groups.IncidentGroup(ctx, n.Group.ID)
	if err != nil {
		k.fault("read incident group", err)
		return n
	}
	if ok && len(g.Members) > 0 {
		n.Group.Members = g.Members
	}
	return n
}
