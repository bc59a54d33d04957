package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// Ledger is the failed-logon ledger kept in the store; it implements
// smbcheck.Ledger. Reserve runs in an IMMEDIATE transaction, so two checks
// of the same account — two CLI runs, or the CLI and the daemon — cannot
// both take the last unit of budget.
type Ledger struct{ s *Store }

// Ledger returns the store's failed-logon ledger.
func (s *Store) Ledger() *Ledger { return &Ledger{s: s} }

var _ smbcheck.Ledger = (*Ledger)(nil)

// ledgerRetention is how long resolved rows are kept: far longer than any
// observation window.
const ledgerRetention = 7 * 24 * time.Hour

// Reserve implements smbcheck.Ledger.
func (l *Ledger) Reserve(ctx context.Context, a smbcheck.Attempt, since time.Time, budget int) (int64, *smbcheck.Refusal, error) {
	var id int64
	var refusal *smbcheck.Refusal
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM logon_attempts WHERE at < ?", formatTime(a.At.Add(-ledgerRetention))); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT account, form, typed, at, cause, status FROM logon_attempts
			WHERE account = ? AND at >= ? ORDER BY at`, a.Account, formatTime(since))
		if err != nil {
			return err
		}
		var entries []smbcheck.LedgerEntry
		for rows.Next() {
			var e smbcheck.LedgerEntry
			var at, cause string
			if err := rows.Scan(&e.Account, &e.Form, &e.Typed, &at, &cause, &e.Status); err != nil {
				rows.Close()
				return err
			}
			if e.At, err = parseTime(at); err != nil {
				rows.Close()
				return fmt.Errorf("logon_attempts.at %q: %w", at, err)
			}
			e.Cause = smbcheck.Cause(cause)
			entries = append(entries, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if refusal = smbcheck.Judge(entries, a, budget, a.At.Sub(since)); refusal != nil {
			return nil
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO logon_attempts(account, form, typed, at) VALUES (?, ?, ?, ?)",
			a.Account, a.Form, a.Typed, formatTime(a.At))
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, nil, fmt.Errorf("ledger reserve: %w", err)
	}
	return id, refusal, nil
}

// Resolve implements smbcheck.Ledger.
func (l *Ledger) Resolve(ctx context.Context, id int64, o smbcheck.Outcome) error {
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		switch o.Kind {
		case smbcheck.Succeeded:
			_, err := tx.ExecContext(ctx, "DELETE FROM logon_attempts WHERE account = (SELECT account FROM logon_attempts WHERE id = ?)", id)
			return err
		case smbcheck.Failed:
			cause := o.Cause
			if cause == "" {
				cause = smbcheck.CauseUnknown
			}
			_, err := tx.ExecContext(ctx, "UPDATE logon_attempts SET cause = ?, status = ? WHERE id = ?", string(cause), o.Status, id)
			return err
		case smbcheck.Cancelled:
			_, err := tx.ExecContext(ctx, "DELETE FROM logon_attempts WHERE id = ?", id)
			return err
		}
		return fmt.Errorf("unknown outcome %d", o.Kind)
	})
	if err != nil {
		return fmt.Errorf("ledger resolve %d: %w", id, err)
	}
	return nil
}

// Key returns the ledger's password-fingerprint key, made on first use.
func (l *Ledger) Key(ctx context.Context) ([]byte, error) {
	var key []byte
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = 'ledger_key'").Scan(&key)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO settings(key, value) VALUES ('ledger_key', ?)", key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ledger key: %w", err)
	}
	return key, nil
}
