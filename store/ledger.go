package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
)

// Ledger is the failed-logon ledger kept in the store; it implements
// smbclient.Ledger. Reserve runs in an IMMEDIATE transaction, so two checks
// of the same account — two CLI runs, or the CLI and the daemon — cannot
// both take the last unit of budget.
type Ledger struct{ s *Store }

// Ledger returns the store's failed-logon ledger.
func (s *Store) Ledger() *Ledger { return &Ledger{s: s} }

var _ smbclient.Ledger = (*Ledger)(nil)

// Rows end with their window (expires = at + window); rows from before
// migration 0003 have no expiry and go after legacyRetention.
const legacyRetention = 24 * time.Hour

// Reserve implements smbclient.Ledger.
func (l *Ledger) Reserve(ctx context.Context, a smbclient.Attempt, since time.Time, budget int) (int64, *smbclient.Refusal, error) {
	var id int64
	var refusal *smbclient.Refusal
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM logon_attempts WHERE (expires != '' AND expires < ?) OR (expires = '' AND at < ?)`,
			formatTime(a.At), formatTime(a.At.Add(-legacyRetention))); err != nil {
			return err
		}
		// The fingerprint key once lived here, next to what it protects: it
		// now comes from the sealing key file (Key).
		if _, err := tx.ExecContext(ctx, "DELETE FROM settings WHERE key = 'ledger_key'"); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM logon_good WHERE at < ?", formatTime(a.At.Add(-goodRetention))); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM own_failures WHERE at < ?", formatTime(a.At.Add(-OwnFailureRetention))); err != nil {
			return err
		}
		if err := markInterrupted(ctx, tx, a.Account); err != nil {
			return err
		}
		good, err := goodForms(ctx, tx, a.Account)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT account, form, typed, at, cause, status FROM logon_attempts
			WHERE account = ? AND at >= ? ORDER BY at`, a.Account, formatTime(since))
		if err != nil {
			return err
		}
		var entries []smbclient.LedgerEntry
		for rows.Next() {
			var e smbclient.LedgerEntry
			var at, cause string
			if err := rows.Scan(&e.Account, &e.Form, &e.Typed, &at, &cause, &e.Status); err != nil {
				rows.Close()
				return err
			}
			if e.At, err = parseTime(at); err != nil {
				rows.Close()
				return fmt.Errorf("logon_attempts.at %q: %w", at, err)
			}
			e.Cause = scanwarden.Cause(cause)
			if ok, g := good[e.Form]; g && e.Status == smbclient.Interrupted && !ok.After(e.At) {
				e.KnownGood = true
			}
			entries = append(entries, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if refusal = smbclient.Judge(entries, a, budget, a.At.Sub(since)); refusal != nil {
			return nil
		}
		res, err := tx.ExecContext(ctx, "INSERT INTO logon_attempts(account, form, typed, at, expires, owner) VALUES (?, ?, ?, ?, ?, ?)",
			a.Account, a.Form, a.Typed, formatTime(a.At), formatTime(a.At.Add(a.At.Sub(since))), processOwner())
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

// OwnFailureRetention is how long scanwarden's own failed logons are
// remembered for lockout pressure (beyond the ledger's window): longer than
// the longest quiet time ([warnings] lockout_quiet).
const OwnFailureRetention = 8 * 24 * time.Hour

// goodRetention is how long a form that succeeded is remembered as known
// good without succeeding again.
const goodRetention = 90 * 24 * time.Hour

// goodForms returns when each of account's forms last succeeded.
func goodForms(ctx context.Context, tx *sql.Tx, account string) (map[string]time.Time, error) {
	rows, err := tx.QueryContext(ctx, "SELECT form, at FROM logon_good WHERE account = ?", account)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	good := map[string]time.Time{}
	for rows.Next() {
		var form, at string
		if err := rows.Scan(&form, &at); err != nil {
			return nil, err
		}
		t, err := parseTime(at)
		if err != nil {
			return nil, fmt.Errorf("logon_good.at %q: %w", at, err)
		}
		good[form] = t
	}
	return good, rows.Err()
}

// markInterrupted resolves the account's pending rows whose process has
// ended (killed, crashed, restarted mid-logon) as interrupted: cause
// unknown, status smbclient.Interrupted. They still count toward the budget
// (the DC may have counted the logon), block no form, and a later success
// clears them.
func markInterrupted(ctx context.Context, tx *sql.Tx, account string) error {
	rows, err := tx.QueryContext(ctx, "SELECT id, owner FROM logon_attempts WHERE account = ? AND cause = ''", account)
	if err != nil {
		return err
	}
	var gone []int64
	for rows.Next() {
		var id int64
		var owner string
		if err := rows.Scan(&id, &owner); err != nil {
			rows.Close()
			return err
		}
		if ownerGone(owner) {
			gone = append(gone, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range gone {
		if _, err := tx.ExecContext(ctx, "UPDATE logon_attempts SET cause = ?, status = ? WHERE id = ? AND cause = ''",
			string(scanwarden.CauseUnknown), smbclient.Interrupted, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO own_failures(account, at, unknown)
			SELECT account, at, 1 FROM logon_attempts WHERE id = ?`, id); err != nil {
			return err
		}
	}
	return nil
}

// Resolve implements smbclient.Ledger.
func (l *Ledger) Resolve(ctx context.Context, id int64, o smbclient.Outcome) error {
	err := l.s.tx(ctx, func(tx *sql.Tx) error {
		switch o.Kind {
		case smbclient.Succeeded:
			// The form is known good from now on; the success and the
			// resolved failures before it go; attempts still pending
			// (another process's logon in flight) stay, and count until
			// they resolve.
			if _, err := tx.ExecContext(ctx, `INSERT INTO logon_good(account, form, at)
				SELECT account, form, at FROM logon_attempts WHERE id = ?
				ON CONFLICT(account, form) DO UPDATE SET at = excluded.at WHERE excluded.at > logon_good.at`, id); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DELETE FROM logon_attempts WHERE id = ?1 OR
				(account = (SELECT account FROM logon_attempts WHERE id = ?1) AND cause != '' AND id < ?1)`, id)
			return err
		case smbclient.Failed:
			cause := o.Cause
			if cause == "" {
				cause = scanwarden.CauseUnknown
			}
			if e := (smbclient.LedgerEntry{Cause: cause}); e.Definite() {
				// The server judged this password wrong for the form (or
				// the account unusable): it is known good no more.
				if _, err := tx.ExecContext(ctx, `DELETE FROM logon_good WHERE (account, form) =
					(SELECT account, form FROM logon_attempts WHERE id = ?)`, id); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, "UPDATE logon_attempts SET cause = ?, status = ? WHERE id = ?", string(cause), o.Status, id); err != nil {
				return err
			}
			// Kept for lockout pressure, which must not take this failure
			// for someone else's once the ledger has let it go.
			unknown := 0
			if cause == scanwarden.CauseUnknown {
				unknown = 1
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO own_failures(account, at, until, unknown)
				SELECT account, at, ?, ? FROM logon_attempts WHERE id = ?`, formatTime(l.s.now()), unknown, id)
			return err
		case smbclient.Cancelled:
			// Only for an attempt whose AUTHENTICATE never left.
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

// ErrNoLedgerKey is returned by Key before the store's sealing key is
// unlocked (UnlockKey).
var ErrNoLedgerKey = errors.New("ledger: the sealing key is not loaded (unlock the store's key first)")

// Key returns the ledger's password-fingerprint key: derived from the
// sealing key, which lives in its own file (0600, outside the database), so
// the fingerprints on disk cannot be tested offline without that file.
func (l *Ledger) Key(context.Context) ([]byte, error) {
	if l.s.key == nil {
		return nil, ErrNoLedgerKey
	}
	return l.s.key.Derive("scanwarden ledger fingerprint v1"), nil
}
