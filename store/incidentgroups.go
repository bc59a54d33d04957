package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
)

// UpdateIncidentGroups applies fn to the open incident groups and those
// closed within incident.ReopenWithin, in one transaction: the groups fn
// returns as changed are stored (ID 0: inserted) and its notices returned
// with their groups' IDs set. fn is incident.Regroup with its arguments
// bound; it must not block.
func (in *Incidents) UpdateIncidentGroups(ctx context.Context,
	fn func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice)) ([]incident.GroupNotice, error) {
	var notices []incident.GroupNotice
	err := in.s.tx(ctx, func(tx *sql.Tx) error {
		var err error
		notices, err = regroup(ctx, tx, in.s.now(), fn)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update incident groups: %w", err)
	}
	return notices, nil
}

// regroup is UpdateIncidentGroups inside tx.
func regroup(ctx context.Context, tx *sql.Tx, now time.Time,
	fn func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice)) ([]incident.GroupNotice, error) {
	var notices []incident.GroupNotice
	err := func() error {
		gs, err := incidentGroups(ctx, tx, `WHERE state = 'open' OR closed_at >= ?`, formatTime(now.Add(-incident.ReopenWithin)))
		if err != nil {
			return err
		}
		changed, ns := fn(gs)
		ids := map[string]int64{}
		for _, g := range changed {
			members, err := json.Marshal(g.Members)
			if err != nil {
				return err
			}
			if g.ID == 0 {
				res, err := tx.ExecContext(ctx, `INSERT INTO incident_groups(key, kind, subject, cause, phrase, state, members, opened_at, closed_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, g.Key.ID(), string(g.Kind), g.Subject, string(g.Cause), g.Phrase, string(g.State),
					string(members), formatTime(g.OpenedAt), optTime(g.ClosedAt))
				if err != nil {
					return fmt.Errorf("incident group: %w", err)
				}
				if g.ID, err = res.LastInsertId(); err != nil {
					return err
				}
				ids[g.Key.ID()] = g.ID
				continue
			}
			if _, err := tx.ExecContext(ctx, "UPDATE incident_groups SET state = ?, members = ?, closed_at = ? WHERE id = ?",
				string(g.State), string(members), optTime(g.ClosedAt), g.ID); err != nil {
				return fmt.Errorf("incident group %d: %w", g.ID, err)
			}
		}
		for _, n := range ns {
			if n.Group.ID == 0 {
				n.Group.ID = ids[n.Group.Key.ID()]
			}
			notices = append(notices, n)
		}
		return nil
	}()
	return notices, err
}

// IncidentGroup reads one incident group (ok false: no such group).
func (in *Incidents) IncidentGroup(ctx context.Context, id int64) (incident.Group, bool, error) {
	gs, err := incidentGroups(ctx, in.s.db, "WHERE id = ?", id)
	if err != nil {
		return incident.Group{}, false, fmt.Errorf("incident group %d: %w", id, err)
	}
	if len(gs) == 0 {
		return incident.Group{}, false, nil
	}
	return gs[0], true, nil
}

// OpenIncidentGroups lists the open incident groups, oldest first.
func (in *Incidents) OpenIncidentGroups(ctx context.Context) ([]incident.Group, error) {
	gs, err := incidentGroups(ctx, in.s.db, "WHERE state = 'open'")
	if err != nil {
		return nil, fmt.Errorf("incident groups: %w", err)
	}
	return gs, nil
}

func incidentGroups(ctx context.Context, q querier, where string, args ...any) ([]incident.Group, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, subject, cause, phrase, state, members, opened_at, closed_at
		FROM incident_groups `+where+` ORDER BY opened_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read incident groups: %w", err)
	}
	defer rows.Close()
	var out []incident.Group
	for rows.Next() {
		var g incident.Group
		var kind, cause, state, members, opened, closed string
		if err := rows.Scan(&g.ID, &kind, &g.Subject, &cause, &g.Phrase, &state, &members, &opened, &closed); err != nil {
			return nil, fmt.Errorf("read incident groups: %w", err)
		}
		g.Kind, g.Cause, g.State = incident.GroupKind(kind), scanwarden.Cause(cause), incident.State(state)
		if err := json.Unmarshal([]byte(members), &g.Members); err != nil {
			return nil, fmt.Errorf("incident group %d: members: %w", g.ID, err)
		}
		for _, f := range []struct {
			s   string
			dst *time.Time
		}{{opened, &g.OpenedAt}, {closed, &g.ClosedAt}} {
			if f.s == "" {
				continue
			}
			if *f.dst, err = parseTime(f.s); err != nil {
				return nil, fmt.Errorf("incident group %d: %w", g.ID, err)
			}
		}
		out = append(out, g)
	}
	return out, rows.Err()
}
