package store

import (
	"context"
	"fmt"

	scanwarden "github.com/scanwarden/scanwarden"
)

// The audit log of admin actions (migration 0007).

// auditKeep is how many entries are kept; older ones are dropped as new
// ones arrive.
const auditKeep = 10000

// AddAudit appends an entry (and drops the oldest beyond auditKeep).
func (s *Store) AddAudit(ctx context.Context, e scanwarden.AuditEntry) error {
	at := e.At
	if at.IsZero() {
		at = s.now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO audit_log(at, actor, client, action, target, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		formatTime(at), e.Actor, e.Client, e.Action, e.Target, e.Detail)
	if err != nil {
		return fmt.Errorf("add audit entry: %w", err)
	}
	if id, err := res.LastInsertId(); err == nil && id%100 == 0 {
		if _, err := s.db.ExecContext(ctx, "DELETE FROM audit_log WHERE id <= ?", id-auditKeep); err != nil {
			return fmt.Errorf("prune audit log: %w", err)
		}
	}
	return nil
}

// Audit returns the newest entries first.
func (s *Store) Audit(ctx context.Context, limit int) ([]scanwarden.AuditEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, actor, client, action, target, detail FROM audit_log
		ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	defer rows.Close()
	var out []scanwarden.AuditEntry
	for rows.Next() {
		var e scanwarden.AuditEntry
		var at string
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Client, &e.Action, &e.Target, &e.Detail); err != nil {
			return nil, fmt.Errorf("read audit log: %w", err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("audit_log.at %q: %w", at, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
