package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/monitor"
	"github.com/scanwarden/scanwarden/notify"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/warning"
)

// incidentNotifier sends an incident change on every channel and records
// each outcome (table, timeline, metrics, faults).
type incidentNotifier struct {
	n       *notify.Notifier
	st      *store.Store
	metrics *metrics
	faults  *faults
	log     *slog.Logger
	now     func() time.Time
}

var (
	_ monitor.Notifier        = (*incidentNotifier)(nil)
	_ monitor.WarningNotifier = (*incidentNotifier)(nil)
)

// Notify implements monitor.Notifier.
func (in *incidentNotifier) Notify(ctx context.Context, ch incident.Change, inc incident.Incident) {
	msg := notify.FromIncident(ch, inc)
	in.record(ctx, inc.ID, msg.Event, in.n.Send(ctx, msg))
}

// NotifyWarning implements monitor.WarningNotifier.
func (in *incidentNotifier) NotifyWarning(ctx context.Context, raised bool, g warning.Group) {
	msg := notify.FromWarning(raised, g)
	for _, o := range in.n.Send(ctx, msg) {
		result := "ok"
		if o.Err != nil {
			result = "failed"
			in.faults.set("notify."+o.Channel, o.Err.Error())
			in.log.Warn("notification failed", "channel", o.Channel, "event", msg.Event, "warning", g.Key(), "attempts", o.Attempts, "err", o.Err)
		} else {
			in.faults.clear("notify." + o.Channel)
			in.log.Info("notification sent", "channel", o.Channel, "event", msg.Event, "warning", g.Key())
		}
		in.metrics.notify.WithLabelValues(o.Channel, msg.Event, result).Inc()
	}
}

func (in *incidentNotifier) record(ctx context.Context, incidentID int64, event string, outs []notify.Outcome) {
	for _, o := range outs {
		rec := store.Notification{IncidentID: incidentID, At: in.now(), Event: event, Channel: o.Channel, Attempts: o.Attempts}
		result := "ok"
		if o.Err != nil {
			rec.Error, result = o.Err.Error(), "failed"
			in.faults.set("notify."+o.Channel, o.Err.Error())
			in.log.Warn("notification failed", "channel", o.Channel, "event", event, "incident", incidentID, "attempts", o.Attempts, "err", o.Err)
		} else {
			in.faults.clear("notify." + o.Channel)
			in.log.Info("notification sent", "channel", o.Channel, "event", event, "incident", incidentID)
		}
		in.metrics.notify.WithLabelValues(o.Channel, event, result).Inc()
		if err := in.st.AddNotification(context.WithoutCancel(ctx), rec); err != nil {
			in.log.Error("record notification", "err", err)
		}
	}
}

// eventSink persists what the watch loop learns and hands every fresh send
// failure to the monitor.
type eventSink struct {
	next   *store.SNMPSink
	events func(ctx context.Context, ev snmp.Event)
	faults *faults
}

var (
	_ snmp.BatchSink = (*eventSink)(nil)
	_ snmp.SeenSink  = (*eventSink)(nil)
)

func (s *eventSink) RecordSeen(ctx context.Context, address string, at time.Time) error {
	err := s.next.RecordSeen(ctx, address, at)
	s.storeFault(err)
	return err
}

func (s *eventSink) RecordDevice(ctx context.Context, inv snmp.Inventory) error {
	err := s.next.RecordDevice(ctx, inv)
	s.storeFault(err)
	return err
}

func (s *eventSink) RecordEvent(ctx context.Context, ev snmp.Event) (bool, error) {
	fresh, err := s.RecordEvents(ctx, []snmp.Event{ev})
	if err != nil {
		return false, err
	}
	return fresh[0], nil
}

// RecordEvents stores a batch (the trap listener's) in one transaction and
// routes the fresh events; unverified ones (a sender not proven to be the
// device) are stored only.
func (s *eventSink) RecordEvents(ctx context.Context, evs []snmp.Event) ([]bool, error) {
	fresh, err := s.next.RecordEvents(ctx, evs)
	s.storeFault(err)
	if err != nil {
		return nil, err
	}
	for i, ev := range evs {
		if fresh[i] && !ev.Unverified {
			s.events(ctx, ev)
		}
	}
	return fresh, nil
}

func (s *eventSink) storeFault(err error) {
	if err != nil && ctxAlive(err) {
		s.faults.set("store", err.Error())
	}
}

func ctxAlive(err error) bool {
	return err != context.Canceled && err != context.DeadlineExceeded
}
