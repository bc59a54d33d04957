package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
)

// The audit log (migrations 0007, 0010). The admin's actions (a session, a
// token, the CLI) are kept one row each in audit_log; anonymous attempts
// (failed logins) are counted in audit_anonymous, one row per client
// address, action and hour. Each table is pruned on its own, so no number
// of anonymous attempts pushes out an authenticated action.

// auditKeep is how many authenticated entries are kept, anonKeep how many
// anonymous (address, action, hour) rows; older ones are dropped as new ones
// arrive.
const (
	auditKeep = 10000
	anonKeep  = 10000
)

// anonWindow is the span one anonymous row counts.
const anonWindow = time.Hour

// AddAudit appends an entry (and drops the oldest beyond auditKeep). An
// entry whose actor is "anonymous" is counted in its address's row for the
// hour instead.
func (au *Auth) AddAudit(ctx context.Context, e scanwarden.AuditEntry) error {
	at := e.At
	if at.IsZero() {
		at = au.s.now()
	}
	if e.Actor == scanwarden.AnonymousActor {
		return au.addAnonymous(ctx, e, at)
	}
	res, err := au.s.db.ExecContext(ctx, `INSERT INTO audit_log(at, actor, client, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		formatTime(at), e.Actor, e.Client, e.Action, e.Target, e.Detail)
	if err != nil {
		return fmt.Errorf("add audit entry: %w", err)
	}
	if id, err := res.LastInsertId(); err == nil && id%100 == 0 {
		if _, err := au.s.db.ExecContext(ctx, "DELETE FROM audit_log WHERE id <= ?", id-auditKeep); err != nil {
			return fmt.Errorf("prune audit log: %w", err)
		}
	}
	return nil
}

func (au *Auth) addAnonymous(ctx context.Context, e scanwarden.AuditEntry, at time.Time) error {
	win := formatTime(at.UTC().Truncate(anonWindow))
	var rowid int64
	err := au.s.db.QueryRowContext(ctx, `INSERT INTO audit_anonymous(client, action, window_start, target, first_at, last_at, count)
		VALUES (?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT(client, action, window_start) DO UPDATE SET count = count + 1, last_at = excluded.last_at
		RETURNING rowid`, e.Client, e.Action, win, e.Target, formatTime(at), formatTime(at)).Scan(&rowid)
	if err != nil {
		return fmt.Errorf("add anonymous audit entry: %w", err)
	}
	if rowid%100 == 0 {
		if _, err := au.s.db.ExecContext(ctx, `DELETE FROM audit_anonymous WHERE rowid IN
			(SELECT rowid FROM audit_anonymous ORDER BY last_at DESC LIMIT -1 OFFSET ?)`, anonKeep); err != nil {
			return fmt.Errorf("prune anonymous audit entries: %w", err)
		}
	}
	return nil
}

// Audit returns the newest entries first: the admin's actions and the
// anonymous rows (each with its Count, At its latest attempt) merged by
// time, at most limit of each.
func (au *Auth) Audit(ctx context.Context, limit int) ([]scanwarden.AuditEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := au.s.db.QueryContext(ctx, `SELECT id, at, actor, client, action, target, detail, 1, '' FROM audit_log
		ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	out, err := scanAudit(rows)
	if err != nil {
		return nil, err
	}
	rows, err = au.s.db.QueryContext(ctx, `SELECT 0, last_at, ?, client, action, target, '', count, first_at
		FROM audit_anonymous ORDER BY last_at DESC LIMIT ?`, scanwarden.AnonymousActor, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	anon, err := scanAudit(rows)
	if err != nil {
		return nil, err
	}
	out = append(out, anon...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out, nil
}

func scanAudit(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}) ([]scanwarden.AuditEntry, error) {
	defer rows.Close()
	var out []scanwarden.AuditEntry
	for rows.Next() {
		var e scanwarden.AuditEntry
		var at, first string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Client, &e.Action, &e.Target, &e.Detail, &e.Count, &first); err != nil {
			return nil, fmt.Errorf("read audit log: %w", err)
		}
		var err error
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("audit at %q: %w", at, err)
		}
		if e.First, err = parseOptTime(first); err != nil {
			return nil, fmt.Errorf("audit first at %q: %w", first, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
