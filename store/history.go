package store

// The checks' history (migration 0017) and the patterns read from it.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/pattern"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// HistoryKept is how long a check stays in check_history.
const HistoryKept = 30 * 24 * time.Hour

// addHistory records one check of destination in check_history (in the
// report's transaction) and drops the destination's rows past HistoryKept.
func addHistory(ctx context.Context, tx *sql.Tx, destination string, at time.Time, rep smbcheck.Report) error {
	sessions, limit, start := -1, 0, ""
	if sl := rep.ServerLog; sl != nil {
		if sl.Share != nil {
			sessions, limit = sl.Share.Current, sl.Share.Max
		}
		var last time.Time
		for _, b := range sl.Boots {
			if b.After(last) && !b.After(at.Add(time.Minute)) {
				last = b
			}
		}
		if !last.IsZero() {
			start = formatTime(last)
		}
	}
	ok := 0
	if rep.OK() {
		ok = 1
	}
	var profile sql.NullString
	if rep.Profile != nil {
		profile = sql.NullString{String: rep.Replayed(), Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO check_history (destination, host, at, ok, cause, sessions, session_limit, server_start, profile)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, destination, rep.Target.Host, formatTime(at), ok, string(rep.Verdict.Cause), sessions, limit, start, profile); err != nil {
		return fmt.Errorf("check history: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM check_history WHERE destination = ? AND at < ?`,
		destination, formatTime(at.Add(-HistoryKept))); err != nil {
		return fmt.Errorf("check history: prune: %w", err)
	}
	return nil
}

// History is the checks' history and the patterns read from it.
type History struct{ s *Store }

// History returns the checks' history.
func (s *Store) History() *History { return &History{s: s} }

// Of names whose history to read: a destination, or (Host) every
// destination on one file server.
type Of struct {
	Destination string
	Host        string
}

// History reads what package pattern explains: of's checks, the MFPs'
// send failures on its incidents' timelines and its incidents' flaps in
// the window before now (0: pattern.DefaultWindow).
func (hs *History) History(ctx context.Context, of Of, now time.Time, window time.Duration) (pattern.History, error) {
	if window <= 0 {
		window = pattern.DefaultWindow
	}
	h := pattern.History{Now: now, Window: window, Loc: time.Local}
	from := formatTime(now.Add(-window))
	col, key := "destination", of.Destination
	if of.Host != "" {
		col, key = "host", of.Host
	}
	if key == "" {
		return h, errors.New("history: no destination or host given")
	}
	rows, err := hs.s.db.QueryContext(ctx, `SELECT at, ok, cause, sessions, session_limit, server_start FROM check_history
		WHERE `+col+` = ? AND at >= ? ORDER BY at`, key, from)
	if err != nil {
		return h, fmt.Errorf("history of %s: %w", key, err)
	}
	for rows.Next() {
		var c pattern.Check
		var at, start string
		if err := rows.Scan(&at, &c.OK, &c.Cause, &c.Sessions, &c.Limit, &start); err != nil {
			rows.Close()
			return h, fmt.Errorf("history of %s: %w", key, err)
		}
		if c.At, err = parseTime(at); err != nil {
			rows.Close()
			return h, fmt.Errorf("history of %s: at %q: %w", key, at, err)
		}
		c.ServerStart, _ = parseOptTime(start)
		if c.Limit > 0 {
			c.LimitName = "the share's connection limit"
		}
		h.Checks = append(h.Checks, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return h, fmt.Errorf("history of %s: %w", key, err)
	}
	dests := `SELECT ?`
	if of.Host != "" {
		dests = `SELECT DISTINCT destination FROM check_history WHERE host = ?`
	}
	rows, err = hs.s.db.QueryContext(ctx, `SELECT t.at, i.device, coalesce(e.device, ''), t.kyocera_code
		FROM incident_timeline t JOIN incidents i ON i.id = t.incident_id
		LEFT JOIN snmp_events e ON e.id = t.event_id
		WHERE t.kind = 'device-failure' AND t.at >= ? AND i.destination IN (`+dests+`)
		ORDER BY t.at`, from, key)
	if err != nil {
		return h, fmt.Errorf("history of %s: device failures: %w", key, err)
	}
	for rows.Next() {
		var r pattern.DeviceReport
		var at string
		if err := rows.Scan(&at, &r.Device, &r.Address, &r.Code); err != nil {
			rows.Close()
			return h, fmt.Errorf("history of %s: device failures: %w", key, err)
		}
		if r.At, err = parseTime(at); err != nil {
			rows.Close()
			return h, fmt.Errorf("history of %s: device failure at %q: %w", key, at, err)
		}
		h.Reports = append(h.Reports, r)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return h, fmt.Errorf("history of %s: device failures: %w", key, err)
	}
	if err := hs.s.db.QueryRowContext(ctx, `SELECT coalesce(sum(flaps), 0) FROM incidents
		WHERE (state = 'open' OR closed_at >= ?) AND destination IN (`+dests+`)`, from, key).Scan(&h.Flaps); err != nil {
		return h, fmt.Errorf("history of %s: flaps: %w", key, err)
	}
	return h, nil
}

// Pattern is the sentence of of's history up to now (pattern.Explain).
func (hs *History) Pattern(ctx context.Context, of Of, now time.Time) (pattern.Explanation, error) {
	h, err := hs.History(ctx, of, now, 0)
	if err != nil {
		return pattern.Explanation{}, err
	}
	return pattern.Explain(h), nil
}
