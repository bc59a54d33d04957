package daemon

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/summary"
	"github.com/scanwarden/scanwarden/warning"
	"github.com/scanwarden/scanwarden/web"
)

// Summary reads the headline's input from the store and builds it (the
// overview, GET /api/v1/summary and `scanwarden status` all come here);
// share is the fallback share's last probe (nil: none) and stuck [receiver]
// bridge_stuck_after, for the bridged destinations' health.
func Summary(ctx context.Context, st *store.Store, share *samba.ShareHealth, stuck time.Duration, now time.Time) (summary.Summary, error) {
	in := summary.Input{Now: now}
	incs, err := st.Incidents().Incidents(ctx, store.IncidentFilter{State: incident.StateOpen, Limit: 100_000})
	if err != nil {
		return summary.Summary{}, fmt.Errorf("summary: %w", err)
	}
	opened := map[string]time.Time{}
	for _, i := range incs {
		opened[strings.ToLower(i.Destination)] = i.OpenedAt
		in.OpenIncidents = append(in.OpenIncidents, summary.Incident{ID: i.ID, Destination: i.Destination, Cause: i.Cause, OpenedAt: i.OpenedAt})
	}
	held, err := st.Scans().HeldByDestination(ctx)
	if err != nil {
		return summary.Summary{}, fmt.Errorf("summary: %w", err)
	}
	for _, n := range held {
		in.Held += n
	}
	ds, err := st.Destinations().Destinations(ctx, "")
	if err != nil {
		return summary.Summary{}, fmt.Errorf("summary: %w", err)
	}
	var bridges []summary.Bridge
	for _, d := range ds {
		if d.Bridged() {
			h, err := BridgeHealth(ctx, st, d, share, stuck, now)
			if err != nil {
				return summary.Summary{}, fmt.Errorf("summary: %w", err)
			}
			bridges = append(bridges, summary.Bridge{Destination: d.Name, Health: h})
		}
		sd := summary.Destination{Name: d.Name, Held: held[d.Name], FailingSince: opened[strings.ToLower(d.Name)]}
		r, ok, err := st.Reports().LatestReport(ctx, d.Name)
		if err != nil {
			return summary.Summary{}, fmt.Errorf("summary: %w", err)
		}
		if ok {
			sd.Checked, sd.Cause, sd.LastCheck = true, r.Cause, r.At
		}
		in.Destinations = append(in.Destinations, sd)
	}
	ws, err := st.Warnings().Warnings(ctx)
	if err != nil {
		return summary.Summary{}, fmt.Errorf("summary: %w", err)
	}
	in.Warnings = warning.Groups(ws)
	if in.Groups, err = st.Incidents().OpenIncidentGroups(ctx); err != nil {
		return summary.Summary{}, fmt.Errorf("summary: %w", err)
	}
	sum := summary.Build(in)
	sum.Bridges = bridges
	if sum.Bridges == nil {
		sum.Bridges = []summary.Bridge{}
	}
	return sum, nil
}

// Warnings implements web.WarningLister: every warning, grouped by what
// the admin must do once.
func (b webBackend) Warnings(ctx context.Context) ([]warning.Group, error) {
	ws, err := b.m.st.Warnings().Warnings(ctx)
	if err != nil {
		return nil, err
	}
	return warning.Groups(ws), nil
}

// Summary implements web.Summarizer.
func (b webBackend) Summary(ctx context.Context) (summary.Summary, error) {
	return Summary(ctx, b.m.st, b.m.recv.shareHealth(), b.m.bridgeStuck(), time.Now())
}

// CheckAll implements web.AllChecker: every destination queued on the
// running scheduler.
func (b webBackend) CheckAll(ctx context.Context) (int, error) {
	mon := b.m.Monitor()
	if mon == nil {
		return 0, web.ErrNotRunning
	}
	return mon.CheckAll(ctx)
}
