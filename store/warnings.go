package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/warning"
)

// Warnings are the destinations' warnings and the history they are judged
// from; it implements warning.Store.
type Warnings struct{ s *Store }

// Warnings returns the warnings kept in the store.
func (s *Store) Warnings() *Warnings { return &Warnings{s: s} }

var _ warning.Store = (*Warnings)(nil)

// VolumeHistory is how far back a volume's free-space samples are kept.
const VolumeHistory = 30 * 24 * time.Hour

// UpdateWarnings stores what one check observed and the destination's
// warnings, in one transaction: it reads the history the judgement needs
// (the volume's earlier samples, the account as this destination's
// previous check saw it, the failed or unresolved logons the ledger holds
// for it since, the destination's warnings so far), lets judge decide, then
// keeps the sample, the account's counters and the warnings, and returns
// which warning groups appeared or went across all destinations since the
// admin was last told (notified true: the caller tells now, and they are
// marked told; false: `check`, which tells nobody, leaves them for the
// daemon). With
// destination "" (a check of a destination not registered) only the
// sample is kept and nothing is raised.
func (wa *Warnings) UpdateWarnings(ctx context.Context, destination, device string, o warning.Observation, notified bool,
	judge func(h warning.History) []warning.Warning) (warning.Update, error) {
	var up warning.Update
	now := wa.s.now()
	err := wa.s.tx(ctx, func(tx *sql.Tx) error {
		h, err := warningHistory(ctx, tx, destination, o)
		if err != nil {
			return err
		}
		before, err := warningRows(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range before {
			if r.Destination == destination {
				h.Before = append(h.Before, r.Warning)
			}
		}
		up.Warnings = judge(h)
		if err := recordObservation(ctx, tx, destination, o); err != nil {
			return err
		}
		if err := recordCurrent(ctx, tx, o, up.Warnings); err != nil {
			return err
		}
		if destination == "" {
			return nil
		}
		if err := replaceWarnings(ctx, tx, destination, device, before, up.Warnings, now); err != nil {
			return err
		}
		after, err := warningRows(ctx, tx)
		if err != nil {
			return err
		}
		up.Raised, up.Cleared, err = notices(ctx, tx, warning.Groups(after), notified, now)
		return err
	})
	if err != nil {
		return warning.Update{}, fmt.Errorf("update warnings of %q: %w", destination, err)
	}
	return up, nil
}

// warningHistory reads what the judge needs besides the warnings already
// standing: the volume's free-space samples, and what the account showed at
// the destination's previous check with our own failed logons since.
func warningHistory(ctx context.Context, tx *sql.Tx, destination string, o warning.Observation) (warning.History, error) {
	var h warning.History
	var err error
	if o.Volume != "" {
		if h.Volume, err = volumeSamples(ctx, tx, o.Volume, o.At.Add(-VolumeHistory), o.At); err != nil {
			return h, err
		}
	}
	if destination == "" || o.Account == "" {
		return h, nil
	}
	if h.Account, err = accountSeen(ctx, tx, destination, o.AccountKey()); err != nil {
		return h, err
	}
	if h.Account != nil {
		if h.OwnFailures, err = ownFailures(ctx, tx, o.AccountKey(), h.Account.At, o.At); err != nil {
			return h, err
		}
	}
	if h.Proven, err = provenPassword(ctx, tx, o); err != nil {
		return h, err
	}
	if h.ScanBytes, err = usualScanBytes(ctx, tx, destination); err != nil {
		return h, err
	}
	return h, nil
}

// ownFailures are the account's failed (or unresolved) logons that
// scanwarden sent in [from, to).
func ownFailures(ctx context.Context, tx *sql.Tx, account string, from, to time.Time) ([]warning.OwnFailure, error) {
	rows, err := tx.QueryContext(ctx, `SELECT at, until, unknown FROM own_failures WHERE account = ? AND at >= ? AND at < ? ORDER BY at`,
		account, formatTime(from), formatTime(to))
	if err != nil {
		return nil, fmt.Errorf("own failures: %w", err)
	}
	defer rows.Close()
	var out []warning.OwnFailure
	for rows.Next() {
		var at, until string
		var f warning.OwnFailure
		if err := rows.Scan(&at, &until, &f.Unknown); err != nil {
			return nil, fmt.Errorf("own failures: %w", err)
		}
		if f.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("own failure at %q: %w", at, err)
		}
		if f.Until, err = parseOptTime(until); err != nil {
			return nil, fmt.Errorf("own failure until %q: %w", until, err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// provenPassword is what the ledger knows of the forms this check logged
// on with (the account's logon_good rows it refreshed: at or after the
// check began): the earliest time one was last known current. Nil when the
// check proved none.
func provenPassword(ctx context.Context, tx *sql.Tx, o warning.Observation) (*warning.Proven, error) {
	if !o.Passed || o.Account == "" {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT current_at FROM logon_good WHERE account = ? AND at >= ?", o.AccountKey(), formatTime(o.At))
	if err != nil {
		return nil, fmt.Errorf("known-good passwords: %w", err)
	}
	defer rows.Close()
	var p *warning.Proven
	for rows.Next() {
		var cur string
		if err := rows.Scan(&cur); err != nil {
			return nil, fmt.Errorf("known-good passwords: %w", err)
		}
		t, err := parseOptTime(cur)
		if err != nil {
			return nil, fmt.Errorf("known-good password current_at %q: %w", cur, err)
		}
		if p == nil || t.Before(p.Current) {
			p = &warning.Proven{Current: t}
		}
	}
	return p, rows.Err()
}

// recordCurrent marks the forms this check logged on with as the
// account's current password at the check — unless the check found it is
// the previous one (then it stays last known current before pwdLastSet).
func recordCurrent(ctx context.Context, tx *sql.Tx, o warning.Observation, ws []warning.Warning) error {
	if !o.Passed || o.Account == "" {
		return nil
	}
	for _, w := range ws {
		if w.Kind == warning.PreviousPassword {
			return nil
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE logon_good SET current_at = ? WHERE account = ? AND at >= ?",
		formatTime(o.At), o.AccountKey(), formatTime(o.At)); err != nil {
		return fmt.Errorf("known-good passwords: %w", err)
	}
	return nil
}

// usualScanBytes is the median size of the last 50 scans the fallback
// share took in for the destination's device (0: none).
func usualScanBytes(ctx context.Context, tx *sql.Tx, destination string) (int64, error) {
	if destination == "" {
		return 0, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT s.size FROM scans s JOIN destinations d ON d.name = s.destination
		WHERE d.device_id IS NOT NULL AND d.device_id = (SELECT device_id FROM destinations WHERE name = ?)
		ORDER BY s.id DESC LIMIT 50`, destination)
	if err != nil {
		return 0, fmt.Errorf("usual scan size: %w", err)
	}
	defer rows.Close()
	var sizes []int64
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return 0, fmt.Errorf("usual scan size: %w", err)
		}
		sizes = append(sizes, n)
	}
	if err := rows.Err(); err != nil || len(sizes) == 0 {
		return 0, err
	}
	slices.Sort(sizes)
	return sizes[len(sizes)/2], nil
}

// recordObservation keeps this check's volume sample (pruning those older
// than VolumeHistory) and what the account showed, for the next judgement.
func recordObservation(ctx context.Context, tx *sql.Tx, destination string, o warning.Observation) error {
	if o.HasFree && o.Volume != "" {
		if _, err := tx.ExecContext(ctx, `INSERT INTO volume_samples(volume, at, free, total) VALUES (?, ?, ?, ?)`,
			o.Volume, formatTime(o.At), int64(min(o.Free, 1<<62)), int64(min(o.Total, 1<<62))); err != nil {
			return fmt.Errorf("volume sample: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM volume_samples WHERE volume = ? AND at < ?`,
			o.Volume, formatTime(o.At.Add(-VolumeHistory))); err != nil {
			return fmt.Errorf("volume samples: prune: %w", err)
		}
	}
	if destination == "" || o.Account == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO accounts_seen(destination, account, at, bad_pwd_count, last_bad)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT(destination) DO UPDATE SET account = excluded.account, at = excluded.at,
		bad_pwd_count = excluded.bad_pwd_count, last_bad = excluded.last_bad`,
		destination, o.AccountKey(), formatTime(o.At), o.BadPwdCount, optTime(o.LastBadPassword)); err != nil {
		return fmt.Errorf("account seen: %w", err)
	}
	return nil
}

// replaceWarnings stores destination's warnings now, each keeping the time
// it was first raised when it stood before.
func replaceWarnings(ctx context.Context, tx *sql.Tx, destination, device string, before []warning.Row, ws []warning.Warning, now time.Time) error {
	since := map[warning.Kind]string{}
	for _, r := range before {
		if r.Destination == destination {
			since[r.Kind] = formatTime(r.Since)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM warnings WHERE destination = ?", destination); err != nil {
		return fmt.Errorf("warnings: %w", err)
	}
	for _, w := range ws {
		ev, err := json.Marshal(w.Evidence)
		if err != nil {
			return err
		}
		st, ok := since[w.Kind]
		if !ok {
			st = formatTime(now)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO warnings(destination, kind, subject, device, headline, fix, kyocera_code, due,
			evidence, since, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, destination, string(w.Kind), w.Subject, device,
			w.Headline, w.Fix, w.KyoceraCode, optTime(w.Due), string(ev), st, formatTime(now)); err != nil {
			return fmt.Errorf("warnings: %w", err)
		}
	}
	return nil
}

// Warnings returns every registered destination's warnings (a removed
// destination's are left out), by destination.
func (wa *Warnings) Warnings(ctx context.Context) ([]warning.Row, error) {
	rows, err := warningRows(ctx, wa.s.db)
	if err != nil {
		return nil, fmt.Errorf("warnings: %w", err)
	}
	return rows, nil
}

// DestinationWarnings returns one destination's warnings.
func (wa *Warnings) DestinationWarnings(ctx context.Context, destination string) ([]warning.Row, error) {
	all, err := wa.Warnings(ctx)
	if err != nil {
		return nil, err
	}
	var out []warning.Row
	for _, r := range all {
		if r.Destination == destination {
			out = append(out, r)
		}
	}
	return out, nil
}

// notices compares the groups now with the ones the admin was told of:
// raised are new, cleared went; with notified they are marked told.
func notices(ctx context.Context, tx *sql.Tx, now []warning.Group, notified bool, at time.Time) (raised, cleared []warning.Group, err error) {
	rows, err := tx.QueryContext(ctx, "SELECT grp FROM warning_notices ORDER BY since, key")
	if err != nil {
		return nil, nil, fmt.Errorf("warning notices: %w", err)
	}
	var told []warning.Group
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("warning notices: %w", err)
		}
		var g warning.Group
		if err := json.Unmarshal([]byte(b), &g); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("warning notice: %w", err)
		}
		told = append(told, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	raised, cleared = warning.Changes(told, now)
	if !notified {
		return raised, cleared, nil
	}
	for _, g := range raised {
		b, err := json.Marshal(g)
		if err != nil {
			return nil, nil, err
		}
		if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO warning_notices(key, grp, since) VALUES (?, ?, ?)", g.Key(), string(b), formatTime(at)); err != nil {
			return nil, nil, fmt.Errorf("warning notices: %w", err)
		}
	}
	for _, g := range cleared {
		if _, err := tx.ExecContext(ctx, "DELETE FROM warning_notices WHERE key = ?", g.Key()); err != nil {
			return nil, nil, fmt.Errorf("warning notices: %w", err)
		}
	}
	return raised, cleared, nil
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func warningRows(ctx context.Context, q querier) ([]warning.Row, error) {
	rows, err := q.QueryContext(ctx, `SELECT d.name, w.kind, w.subject, w.device, w.headline, w.fix, w.kyocera_code, w.due,
			w.evidence, w.since, w.updated
		FROM warnings w JOIN destinations d ON d.name = w.destination ORDER BY d.name, w.kind`)
	if err != nil {
		return nil, fmt.Errorf("read warnings: %w", err)
	}
	defer rows.Close()
	var out []warning.Row
	for rows.Next() {
		var r warning.Row
		var kind, due, ev, since, updated string
		if err := rows.Scan(&r.Destination, &kind, &r.Subject, &r.Device, &r.Headline, &r.Fix, &r.KyoceraCode, &due, &ev,
			&since, &updated); err != nil {
			return nil, fmt.Errorf("read warnings: %w", err)
		}
		r.Kind = warning.Kind(kind)
		r.Evidence = smbcheck.Evidence{}
		if err := json.Unmarshal([]byte(ev), &r.Evidence); err != nil {
			return nil, fmt.Errorf("warning %s of %s: evidence: %w", kind, r.Destination, err)
		}
		for _, f := range []struct {
			s   string
			dst *time.Time
		}{{due, &r.Due}, {since, &r.Since}, {updated, &r.Updated}} {
			if f.s == "" {
				continue
			}
			if *f.dst, err = parseTime(f.s); err != nil {
				return nil, fmt.Errorf("warning %s of %s: %q: %w", kind, r.Destination, f.s, err)
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func volumeSamples(ctx context.Context, tx *sql.Tx, volume string, since, before time.Time) ([]warning.Sample, error) {
	rows, err := tx.QueryContext(ctx, `SELECT at, free FROM volume_samples WHERE volume = ? AND at >= ? AND at < ? ORDER BY at`,
		volume, formatTime(since), formatTime(before))
	if err != nil {
		return nil, fmt.Errorf("volume samples: %w", err)
	}
	defer rows.Close()
	var out []warning.Sample
	for rows.Next() {
		var at string
		var free int64
		if err := rows.Scan(&at, &free); err != nil {
			return nil, fmt.Errorf("volume samples: %w", err)
		}
		t, err := parseTime(at)
		if err != nil {
			return nil, fmt.Errorf("volume sample at %q: %w", at, err)
		}
		out = append(out, warning.Sample{At: t, Free: uint64(max(free, 0))})
	}
	return out, rows.Err()
}

// accountSeen is the account as the destination's previous check saw it;
// nil when it never did, or saw another account.
func accountSeen(ctx context.Context, tx *sql.Tx, destination, account string) (*warning.Seen, error) {
	var acct, at, lastBad string
	var n int
	err := tx.QueryRowContext(ctx, `SELECT account, at, bad_pwd_count, last_bad FROM accounts_seen WHERE destination = ?`,
		destination).Scan(&acct, &at, &n, &lastBad)
	if err == sql.ErrNoRows || (err == nil && acct != account) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("account seen: %w", err)
	}
	s := &warning.Seen{BadPwdCount: n}
	if s.At, err = parseTime(at); err != nil {
		return nil, fmt.Errorf("account seen at %q: %w", at, err)
	}
	if s.LastBadPassword, err = parseOptTime(lastBad); err != nil {
		return nil, fmt.Errorf("account seen last_bad %q: %w", lastBad, err)
	}
	return s, nil
}
