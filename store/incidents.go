package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
)

// Incidents keeps the incidents, their timelines, the notifications sent
// and the incident groups. It implements monitor.Incidents and
// monitor.Groups.
type Incidents struct{ s *Store }

// Incidents returns the store's incidents.
func (s *Store) Incidents() *Incidents { return &Incidents{s: s} }

// maxTimelineChecks bounds the check entries kept per incident (the oldest
// go first); other entries are few and all kept.
const maxTimelineChecks = 500

const incidentCols = `id, destination, device, state, cause, kyocera_code, summary, fix, opened_at, closed_at,
	last_failure, green_since, flaps, affected_jobs`

func scanIncident(r rowScanner) (incident.Incident, error) {
	var i incident.Incident
	var state, cause, opened, closed, lastFail, green string
	if err := r.Scan(&i.ID, &i.Destination, &i.Device, &state, &cause, &i.KyoceraCode, &i.Summary, &i.Fix,
		&opened, &closed, &lastFail, &green, &i.Flaps, &i.AffectedJobs); err != nil {
		return i, err
	}
	i.State, i.Cause = incident.State(state), scanwarden.Cause(cause)
	var err error
	for _, f := range []struct {
		s   string
		dst *time.Time
	}{{opened, &i.OpenedAt}, {closed, &i.ClosedAt}, {lastFail, &i.LastFailure}, {green, &i.GreenSince}} {
		if *f.dst, err = parseOptTime(f.s); err != nil {
			return i, fmt.Errorf("incident %d: %w", i.ID, err)
		}
	}
	return i, nil
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// UpdateIncident applies fn to the destination's latest incident (its open
// one, else its most recently closed, else nil) in one transaction: the
// incident fn returns is inserted (ID 0) or updated, its entries appended,
// and the Result returned with the incident's ID set. fn is
// incident.Next/Fold with the inputs bound; it must not block.
func (in *Incidents) UpdateIncident(ctx context.Context, destination string, fn func(cur *incident.Incident) incident.Result) (incident.Result, error) {
	var res incident.Result
	err := in.s.tx(ctx, func(tx *sql.Tx) error {
		var cur *incident.Incident
		i, err := scanIncident(tx.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE destination = ?
			ORDER BY state = 'open' DESC, id DESC LIMIT 1`, destination))
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read incident of %s: %w", destination, err)
		default:
			cur = &i
		}
		res = fn(cur)
		if res.Incident == nil {
			return nil
		}
		n := *res.Incident
		if n.Destination == "" {
			n.Destination = destination
		}
		args := []any{n.Destination, n.Device, string(n.State), string(n.Cause), n.KyoceraCode, n.Summary, n.Fix,
			formatTime(n.OpenedAt), optTime(n.ClosedAt), optTime(n.LastFailure), optTime(n.GreenSince), n.Flaps, n.AffectedJobs}
		if n.ID == 0 {
			r, err := tx.ExecContext(ctx, `INSERT INTO incidents (destination, device, state, cause, kyocera_code, summary, fix,
				opened_at, closed_at, last_failure, green_since, flaps, affected_jobs) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...)
			if err != nil {
				return fmt.Errorf("insert incident of %s: %w", destination, err)
			}
			if n.ID, err = r.LastInsertId(); err != nil {
				return err
			}
		} else {
			_, err := tx.ExecContext(ctx, `UPDATE incidents SET destination=?, device=?, state=?, cause=?, kyocera_code=?, summary=?,
				fix=?, opened_at=?, closed_at=?, last_failure=?, green_since=?, flaps=?, affected_jobs=? WHERE id=?`, append(args, n.ID)...)
			if err != nil {
				return fmt.Errorf("update incident %d: %w", n.ID, err)
			}
		}
		res.Incident = &n
		checks := false
		for _, e := range res.Entries {
			if err := addEntry(ctx, tx, n.ID, e); err != nil {
				return err
			}
			checks = checks || e.Kind == incident.EntryCheck
		}
		if checks {
			_, err := tx.ExecContext(ctx, `DELETE FROM incident_timeline WHERE incident_id = ? AND kind = 'check' AND id NOT IN
				(SELECT id FROM incident_timeline WHERE incident_id = ? AND kind = 'check' ORDER BY id DESC LIMIT ?)`,
				n.ID, n.ID, maxTimelineChecks)
			if err != nil {
				return fmt.Errorf("trim timeline of incident %d: %w", n.ID, err)
			}
		}
		return nil
	})
	return res, err
}

func addEntry(ctx context.Context, tx *sql.Tx, id int64, e incident.Entry) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO incident_timeline (incident_id, at, kind, cause, kyocera_code, text, report_id, event_id)
		VALUES (?,?,?,?,?,?,?,?)`, id, formatTime(e.At), string(e.Kind), string(e.Cause), e.Code, e.Text, e.ReportID, e.EventID)
	if err != nil {
		return fmt.Errorf("add timeline entry to incident %d: %w", id, err)
	}
	return nil
}

// IncidentFilter selects incidents; zero values select everything.
type IncidentFilter struct {
	State       incident.State // "" = any
	Destination string
	Limit       int // 0 = 500
}

// Incidents lists incidents, newest first.
func (in *Incidents) Incidents(ctx context.Context, f IncidentFilter) ([]incident.Incident, error) {
	q := `SELECT ` + incidentCols + ` FROM incidents WHERE 1=1`
	var args []any
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, string(f.State))
	}
	if f.Destination != "" {
		q += ` AND destination = ?`
		args = append(args, f.Destination)
	}
	if f.Limit <= 0 {
		f.Limit = 500
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows, err := in.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	defer rows.Close()
	var out []incident.Incident
	for rows.Next() {
		i, err := scanIncident(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// ErrNoIncident is returned for a missing incident.
var ErrNoIncident = errors.New("no such incident")

// Incident returns one incident.
func (in *Incidents) Incident(ctx context.Context, id int64) (incident.Incident, error) {
	i, err := scanIncident(in.s.db.QueryRowContext(ctx, `SELECT `+incidentCols+` FROM incidents WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return i, fmt.Errorf("incident %d: %w", id, ErrNoIncident)
	}
	return i, err
}

// Timeline returns an incident's entries, oldest first (the newest limit;
// 0 = all).
func (in *Incidents) Timeline(ctx context.Context, id int64, limit int) ([]incident.Entry, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := in.s.db.QueryContext(ctx, `SELECT at, kind, cause, kyocera_code, text, report_id, event_id FROM
		(SELECT * FROM incident_timeline WHERE incident_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("timeline of incident %d: %w", id, err)
	}
	defer rows.Close()
	var out []incident.Entry
	for rows.Next() {
		var e incident.Entry
		var at, kind, cause string
		if err := rows.Scan(&at, &kind, &cause, &e.Code, &e.Text, &e.ReportID, &e.EventID); err != nil {
			return nil, err
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, err
		}
		e.Kind, e.Cause = incident.EntryKind(kind), scanwarden.Cause(cause)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Notification is one notification sent or tried.
type Notification struct {
	IncidentID int64 // 0 for a test send
	At         time.Time
	Event      string
	Channel    string
	Attempts   int
	Error      string // "" when delivered
}

// AddNotification records a notification and, for an incident, puts it on
// its timeline, in one transaction.
func (in *Incidents) AddNotification(ctx context.Context, n Notification) error {
	return in.s.tx(ctx, func(tx *sql.Tx) error {
		var inc any
		if n.IncidentID != 0 {
			inc = n.IncidentID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO notifications (incident_id, at, event, channel, attempts, error) VALUES (?,?,?,?,?,?)`,
			inc, formatTime(n.At), n.Event, n.Channel, n.Attempts, n.Error); err != nil {
			return fmt.Errorf("record notification: %w", err)
		}
		if n.IncidentID == 0 {
			return nil
		}
		text := n.Event + " sent by " + n.Channel
		if n.Error != "" {
			text = fmt.Sprintf("%s by %s failed after %d attempts: %s", n.Event, n.Channel, n.Attempts, n.Error)
		}
		return addEntry(ctx, tx, n.IncidentID, incident.Entry{At: n.At, Kind: incident.EntryNotification, Text: text})
	})
}

// Notifications lists the newest notifications (limit 0 = 100).
func (in *Incidents) Notifications(ctx context.Context, limit int) ([]Notification, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := in.s.db.QueryContext(ctx, `SELECT coalesce(incident_id, 0), at, event, channel, attempts, error FROM notifications
		ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	defer rows.Close()
	var out []Notification
	for rows.Next() {
		var n Notification
		var at string
		if err := rows.Scan(&n.IncidentID, &at, &n.Event, &n.Channel, &n.Attempts, &n.Error); err != nil {
			return nil, err
		}
		if n.At, err = parseTime(at); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
