package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// Reports are the destinations' stored checks and their latest verdicts.
type Reports struct{ s *Store }

// Reports returns the stored checks.
func (s *Store) Reports() *Reports { return &Reports{s: s} }

// ReportHistory is how many reports are kept per destination.
const ReportHistory = 50

// AddReport keeps rep as the destination's latest report, dropping the
// oldest beyond ReportHistory.
func (rp *Reports) AddReport(ctx context.Context, destination string, rep smbcheck.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("add report: %w", err)
	}
	at := rep.Started
	if at.IsZero() {
		at = rp.s.now()
	}
	return rp.s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM destinations WHERE name = ?", destination).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("add report: destination %q: %w", destination, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("add report: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO destination_reports (destination_id, at, cause, kyocera_code, summary, report)
			VALUES (?, ?, ?, ?, ?, ?)`, id, formatTime(at), string(rep.Verdict.Cause), rep.Verdict.KyoceraCode,
			rep.Verdict.Summary, string(b)); err != nil {
			return fmt.Errorf("add report: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM destination_reports WHERE destination_id = ? AND id NOT IN
			(SELECT id FROM destination_reports WHERE destination_id = ? ORDER BY at DESC, id DESC LIMIT ?)`,
			id, id, ReportHistory); err != nil {
			return fmt.Errorf("add report: prune: %w", err)
		}
		return addHistory(ctx, tx, destination, at, rep)
	})
}

// Reports returns a destination's reports, newest first, at most limit
// (limit <= 0 or above ReportHistory: all kept). An unknown destination is
// ErrNotFound; one never checked gives none.
func (rp *Reports) Reports(ctx context.Context, destination string, limit int) ([]registry.Report, error) {
	if limit <= 0 || limit > ReportHistory {
		limit = ReportHistory
	}
	var id int64
	err := rp.s.db.QueryRowContext(ctx, "SELECT id FROM destinations WHERE name = ?", destination).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("reports: destination %q: %w", destination, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reports of %q: %w", destination, err)
	}
	rows, err := rp.s.db.QueryContext(ctx, `SELECT r.id, t.name, r.at, r.cause, r.kyocera_code, r.summary, r.report
		FROM destination_reports r JOIN destinations t ON t.id = r.destination_id
		WHERE r.destination_id = ? ORDER BY r.at DESC, r.id DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("reports of %q: %w", destination, err)
	}
	defer rows.Close()
	var out []registry.Report
	for rows.Next() {
		var r registry.Report
		var at, cause, body string
		if err := rows.Scan(&r.ID, &r.Destination, &at, &cause, &r.KyoceraCode, &r.Summary, &body); err != nil {
			return nil, fmt.Errorf("reports of %q: %w", destination, err)
		}
		r.Cause = scanwarden.Cause(cause)
		if r.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("report %d: at: %w", r.ID, err)
		}
		r.JSON = []byte(body)
		if err := json.Unmarshal(r.JSON, &r.Report); err != nil {
			return nil, fmt.Errorf("report %d: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LatestReport returns the destination's newest report; ok is false when it
// was never checked.
func (rp *Reports) LatestReport(ctx context.Context, destination string) (r registry.Report, ok bool, err error) {
	rs, err := rp.Reports(ctx, destination, 1)
	if err != nil || len(rs) == 0 {
		return r, false, err
	}
	return rs[0], true, nil
}

// LatestVerdict is a destination's newest stored check without its steps
// (the lists: the web's dashboard and /api/v1/destinations).
type LatestVerdict struct {
	At          time.Time
	Verdict     smbcheck.Verdict
	WorkingForm string // the user-name form that worked, as typed
}

// LatestVerdicts returns every checked destination's newest verdict, by
// lower-cased destination name, in one query (a LatestReport per
// destination decodes each whole report).
func (rp *Reports) LatestVerdicts(ctx context.Context) (map[string]LatestVerdict, error) {
	rows, err := rp.s.db.QueryContext(ctx, `SELECT d.name, r.at, r.cause, r.kyocera_code, r.summary,
			coalesce(json_extract(r.report, '$.verdict.fix'), ''), coalesce(json_extract(r.report, '$.working_form.typed'), '')
		FROM destinations d JOIN destination_reports r ON r.id =
			(SELECT id FROM destination_reports WHERE destination_id = d.id ORDER BY at DESC, id DESC LIMIT 1)`)
	if err != nil {
		return nil, fmt.Errorf("latest verdicts: %w", err)
	}
	defer rows.Close()
	out := map[string]LatestVerdict{}
	for rows.Next() {
		var name, at, cause string
		var v LatestVerdict
		if err := rows.Scan(&name, &at, &cause, &v.Verdict.KyoceraCode, &v.Verdict.Summary, &v.Verdict.Fix, &v.WorkingForm); err != nil {
			return nil, fmt.Errorf("latest verdicts: %w", err)
		}
		if v.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("latest verdicts: %s: at %q: %w", name, at, err)
		}
		v.Verdict.Cause = scanwarden.Cause(cause)
		out[strings.ToLower(name)] = v
	}
	return out, rows.Err()
}
