package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden/receiver"
)

// Scans is the receiver's catalogue kept in the store; it implements
// receiver.Catalogue.
type Scans struct{ s *Store }

// Scans returns the scan catalogue.
func (s *Store) Scans() *Scans { return &Scans{s: s} }

var _ receiver.Catalogue = (*Scans)(nil)

const scanCols = `id, destination, folder, file, size, sha256, state, received_at, delivered_at, error,
	inbox_path, held_path, writer, remote_name, attempts, next_attempt, claim, forced`

func scanArgs(sc receiver.Scan) []any {
	return []any{sc.Destination, sc.Folder, sc.File, sc.Size, sc.SHA256, string(sc.State), formatTime(sc.ReceivedAt),
		optTime(sc.DeliveredAt), sc.Error, sc.InboxPath, sc.HeldPath, sc.Writer, sc.RemoteName, sc.Attempts,
		optTime(sc.NextAttempt), sc.Claim, sc.Forced}
}

// AddScan implements receiver.Catalogue.
func (c *Scans) AddScan(ctx context.Context, sc receiver.Scan) (int64, error) {
	var id int64
	err := c.s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO scans(destination, folder, file, size, sha256, state, received_at,
			delivered_at, error, inbox_path, held_path, writer, remote_name, attempts, next_attempt, claim, forced)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, scanArgs(sc)...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("add scan %s: %w", sc.File, err)
	}
	return id, nil
}

// UpdateScan implements receiver.Catalogue.
func (c *Scans) UpdateScan(ctx context.Context, sc receiver.Scan, from receiver.State) (bool, error) {
	ok, err := c.s.execOne(ctx, `UPDATE scans SET destination = ?, folder = ?, file = ?, size = ?, sha256 = ?,
			state = ?, received_at = ?, delivered_at = ?, error = ?, inbox_path = ?, held_path = ?, writer = ?,
			remote_name = ?, attempts = ?, next_attempt = ?, claim = ?, forced = ? WHERE id = ? AND state = ?`,
		append(scanArgs(sc), sc.ID, string(from))...)
	if err != nil {
		return false, fmt.Errorf("update scan %d: %w", sc.ID, err)
	}
	return ok, nil
}

// DeleteScan implements receiver.Catalogue.
func (c *Scans) DeleteScan(ctx context.Context, id int64, from receiver.State) (bool, error) {
	ok, err := c.s.execOne(ctx, "DELETE FROM scans WHERE id = ? AND state = ?", id, string(from))
	if err != nil {
		return false, fmt.Errorf("delete scan %d: %w", id, err)
	}
	return ok, nil
}

// Scan implements receiver.Catalogue.
func (c *Scans) Scan(ctx context.Context, id int64) (receiver.Scan, error) {
	rows, err := c.s.db.QueryContext(ctx, "SELECT "+scanCols+" FROM scans WHERE id = ?", id)
	if err != nil {
		return receiver.Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	out, err := readScans(rows)
	if err != nil {
		return receiver.Scan{}, fmt.Errorf("scan %d: %w", id, err)
	}
	if len(out) == 0 {
		return receiver.Scan{}, fmt.Errorf("scan %d: %w", id, ErrNotFound)
	}
	return out[0], nil
}

// Scans implements receiver.Catalogue: oldest first.
func (c *Scans) Scans(ctx context.Context, q receiver.ScanQuery) ([]receiver.Scan, error) {
	var where []string
	var args []any
	if len(q.States) > 0 {
		ph := make([]string, len(q.States))
		for i, st := range q.States {
			ph[i] = "?"
			args = append(args, string(st))
		}
		where = append(where, "state IN ("+strings.Join(ph, ", ")+")")
	}
	if q.Destination != nil {
		where = append(where, "destination = ?")
		args = append(args, *q.Destination)
	}
	if q.InboxPath != nil {
		where = append(where, "inbox_path = ?")
		args = append(args, *q.InboxPath)
	}
	if !q.DueBefore.IsZero() {
		where = append(where, "next_attempt <= ?")
		args = append(args, formatTime(q.DueBefore))
	}
	query := "SELECT " + scanCols + " FROM scans"
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	if q.Newest {
		query += " ORDER BY id DESC"
	} else {
		query += " ORDER BY id"
	}
	if q.Limit > 0 {
		query += fmt.Sprintf(" LIMIT %d", q.Limit)
	}
	rows, err := c.s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list scans: %w", err)
	}
	out, err := readScans(rows)
	if err != nil {
		return nil, fmt.Errorf("list scans: %w", err)
	}
	return out, nil
}

func readScans(rows *sql.Rows) ([]receiver.Scan, error) {
	defer rows.Close()
	var out []receiver.Scan
	for rows.Next() {
		var sc receiver.Scan
		var state, received, delivered, next string
		if err := rows.Scan(&sc.ID, &sc.Destination, &sc.Folder, &sc.File, &sc.Size, &sc.SHA256, &state, &received,
			&delivered, &sc.Error, &sc.InboxPath, &sc.HeldPath, &sc.Writer, &sc.RemoteName, &sc.Attempts, &next,
			&sc.Claim, &sc.Forced); err != nil {
			return nil, err
		}
		sc.State = receiver.State(state)
		var err error
		if sc.ReceivedAt, err = parseTime(received); err != nil {
			return nil, fmt.Errorf("scans.received_at %q: %w", received, err)
		}
		if sc.DeliveredAt, err = parseOptTime(delivered); err != nil {
			return nil, fmt.Errorf("scans.delivered_at %q: %w", delivered, err)
		}
		if sc.NextAttempt, err = parseOptTime(next); err != nil {
			return nil, fmt.Errorf("scans.next_attempt %q: %w", next, err)
		}
		out = append(out, sc)
	}
	return out, rows.Err()
}

// ScanStats implements receiver.Catalogue.
func (c *Scans) ScanStats(ctx context.Context) (receiver.ScanStats, error) {
	st := receiver.ScanStats{Counts: map[receiver.State]int{}}
	rows, err := c.s.db.QueryContext(ctx, "SELECT state, count(*) FROM scans GROUP BY state")
	if err != nil {
		return st, fmt.Errorf("scan stats: %w", err)
	}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			rows.Close()
			return st, fmt.Errorf("scan stats: %w", err)
		}
		st.Counts[receiver.State(state)] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("scan stats: %w", err)
	}
	var bytes sql.NullInt64
	var oldest sql.NullString
	if err := c.s.db.QueryRowContext(ctx, `SELECT sum(size), min(received_at) FROM scans WHERE state IN ('held', 'failed', 'delivering')`).
		Scan(&bytes, &oldest); err != nil {
		return st, fmt.Errorf("scan stats: %w", err)
	}
	st.HeldBytes = bytes.Int64
	if oldest.Valid && oldest.String != "" {
		if st.OldestHeld, err = parseTime(oldest.String); err != nil {
			return st, fmt.Errorf("scan stats: %w", err)
		}
	}
	last, err := c.s.db.QueryContext(ctx, "SELECT "+scanCols+" FROM scans WHERE state = 'failed' ORDER BY id DESC LIMIT 1")
	if err != nil {
		return st, fmt.Errorf("scan stats: %w", err)
	}
	failed, err := readScans(last)
	if err != nil {
		return st, fmt.Errorf("scan stats: %w", err)
	}
	if len(failed) == 1 {
		st.LastFailed = &failed[0]
	}
	return st, nil
}

// Backlog sums up destination's deliveries (three small queries): what
// waits, since when, the newest delivery and the newest failure.
func (c *Scans) Backlog(ctx context.Context, destination string) (receiver.Backlog, error) {
	var b receiver.Backlog
	var oldest sql.NullString
	if err := c.s.db.QueryRowContext(ctx, `SELECT count(*), min(received_at) FROM scans
		WHERE state IN ('held', 'failed', 'delivering') AND destination = ?`, destination).Scan(&b.Waiting, &oldest); err != nil {
		return b, fmt.Errorf("backlog of %s: %w", destination, err)
	}
	var err error
	if oldest.Valid && oldest.String != "" {
		if b.Oldest, err = parseTime(oldest.String); err != nil {
			return b, fmt.Errorf("backlog of %s: %w", destination, err)
		}
	}
	var at, name string
	err = c.s.db.QueryRowContext(ctx, `SELECT delivered_at, remote_name FROM scans
		WHERE state IN ('delivered', 'purged') AND destination = ? AND delivered_at != '' ORDER BY delivered_at DESC LIMIT 1`, destination).Scan(&at, &name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return b, fmt.Errorf("backlog of %s: %w", destination, err)
	default:
		if b.LastDelivered, err = parseTime(at); err != nil {
			return b, fmt.Errorf("backlog of %s: %w", destination, err)
		}
		b.LastFile = name
	}
	rows, err := c.s.db.QueryContext(ctx, "SELECT "+scanCols+" FROM scans WHERE state = 'failed' AND destination = ? ORDER BY id DESC LIMIT 1", destination)
	if err != nil {
		return b, fmt.Errorf("backlog of %s: %w", destination, err)
	}
	failed, err := readScans(rows)
	if err != nil {
		return b, fmt.Errorf("backlog of %s: %w", destination, err)
	}
	if len(failed) == 1 {
		b.LastFailed = &failed[0]
	}
	return b, nil
}

// Counts returns how many scans are in each state (one query: the web's
// dashboard).
func (c *Scans) Counts(ctx context.Context) (map[receiver.State]int, error) {
	rows, err := c.s.db.QueryContext(ctx, "SELECT state, count(*) FROM scans GROUP BY state")
	if err != nil {
		return nil, fmt.Errorf("count scans: %w", err)
	}
	defer rows.Close()
	out := map[receiver.State]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count scans: %w", err)
		}
		out[receiver.State(st)] = n
	}
	return out, rows.Err()
}
