package monitor

import (
	"context"
	"log/slog"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/warning"
)

// desk keeps the incidents: it folds each input into its destination's
// incident (the rules), moves the destination between incident groups,
// judges stored reports for warnings, and hands every change to be told
// of to the outbox. It holds no state of its own besides its wiring.
type desk struct {
	incidents Incidents
	notifier  Notifier // nil: incidents are not told of
	cfg       Config   // CloseAfter, Warnings, Groups and their notifiers, GroupSettle
	now       func() time.Time
	log       *slog.Logger
	out       *outbox
	arm       func(name string, inc *incident.Incident) // close-arming
	busy      func() bool                               // checks are queued or running
	fault     func(what string, err error)
	stop      <-chan struct{} // closed when the checks are cancelled (set by Open)
}

// apply folds inputs into the destination's incident and notifies every
// change (in the background).
func (k *desk) apply(ctx context.Context, d Destination, ins []incident.Input) (*incident.Incident, error) {
	now := k.now()
	res, err := k.incidents.UpdateIncident(ctx, d.Name, func(cur *incident.Incident) incident.Result {
		return incident.Fold(cur, ins, now, k.cfg.CloseAfter)
	})
	if err != nil {
		k.fault("update incident of "+d.Name, err)
		return nil, err
	}
	k.arm(d.Name, res.Incident)
	if res.Incident == nil {
		return nil, nil
	}
	inc := *res.Incident
	grouped := k.regroup(ctx, d, ins, inc, now)
	for _, ch := range res.Changes {
		k.log.Info("incident "+string(ch), "destination", d.Name, "incident", inc.ID, "cause", inc.Cause)
		if k.notifier == nil || grouped {
			continue // a group's incident is told of once for all of them
		}
		k.out.send(func(nctx context.Context) { k.notifier.Notify(nctx, ch, inc) })
	}
	return &inc, nil
}

// warn judges a stored report for warnings and notifies, in the
// background, each group that appeared or went. A warning never touches
// the incident or the verdict.
func (k *desk) warn(ctx context.Context, d Destination, rep smbcheck.Report) {
	if k.cfg.Warnings == nil {
		return
	}
	up, err := k.cfg.Warnings.Observe(ctx, d.Name, d.Device, rep)
	if err != nil {
		k.fault("judge warnings of "+d.Name, err)
		return
	}
	send := func(raised bool, g warning.Group) {
		what := "cleared"
		if raised {
			what = "raised"
		}
		k.log.Info("warning "+what, "kind", g.Kind, "subject", g.Subject, "destinations", len(g.Destinations))
		if k.cfg.WarningNotifier == nil {
			return
		}
		k.out.send(func(nctx context.Context) { k.cfg.WarningNotifier.NotifyWarning(nctx, raised, g) })
	}
	for _, g := range up.Raised {
		send(true, g)
	}
	for _, g := range up.Cleared {
		send(false, g)
	}
}
