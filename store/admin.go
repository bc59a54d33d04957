package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
)

// Auth keeps what the web's logons need: the admin's password, the browser
// sessions, the API tokens and the audit log. It implements web.AuthStore.
type Auth struct{ s *Store }

// Auth returns the store's logon and audit records.
func (s *Store) Auth() *Auth { return &Auth{s: s} }

// The web admin's password and browser sessions (migration 0007).

// AdminPassword returns the admin's argon2id hash, "" when none is set.
func (au *Auth) AdminPassword(ctx context.Context) (string, error) {
	var h string
	err := au.s.db.QueryRowContext(ctx, "SELECT password_hash FROM web_admin WHERE id = 1").Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read admin password: %w", err)
	}
	return h, nil
}

// SetAdminPassword stores the admin's password hash.
func (au *Auth) SetAdminPassword(ctx context.Context, hash string) error {
	if hash == "" {
		return errors.New("set admin password: empty hash")
	}
	_, err := au.s.db.ExecContext(ctx, `INSERT INTO web_admin(id, password_hash, updated_at) VALUES (1, ?, ?)
		ON CONFLICT(id) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
		hash, formatTime(au.s.now()))
	if err != nil {
		return fmt.Errorf("set admin password: %w", err)
	}
	return nil
}

// CreateSession stores a new session and drops the expired ones.
func (au *Auth) CreateSession(ctx context.Context, se scanwarden.Session) error {
	return au.s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM web_sessions WHERE expires < ?", formatTime(au.s.now())); err != nil {
			return fmt.Errorf("prune sessions: %w", err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO web_sessions(id_hash, created, expires, last_seen, client)
			VALUES (?, ?, ?, ?, ?)`, se.IDHash, formatTime(se.Created), formatTime(se.Expires), formatTime(se.LastSeen), se.Client)
		if err != nil {
			return fmt.Errorf("create session: %w", err)
		}
		return nil
	})
}

// Session returns the session with the hash; ok false when there is none.
func (au *Auth) Session(ctx context.Context, idHash string) (scanwarden.Session, bool, error) {
	var se scanwarden.Session
	var created, expires, seen string
	err := au.s.db.QueryRowContext(ctx, `SELECT id_hash, created, expires, last_seen, client FROM web_sessions WHERE id_hash = ?`,
		idHash).Scan(&se.IDHash, &created, &expires, &seen, &se.Client)
	if errors.Is(err, sql.ErrNoRows) {
		return se, false, nil
	}
	if err != nil {
		return se, false, fmt.Errorf("read session: %w", err)
	}
	if se.Created, err = parseTime(created); err == nil {
		if se.Expires, err = parseTime(expires); err == nil {
			se.LastSeen, err = parseTime(seen)
		}
	}
	if err != nil {
		return se, false, fmt.Errorf("read session: %w", err)
	}
	return se, true, nil
}

// TouchSession moves a session's idle clock.
func (au *Auth) TouchSession(ctx context.Context, idHash string, at time.Time) error {
	if _, err := au.s.db.ExecContext(ctx, "UPDATE web_sessions SET last_seen = ? WHERE id_hash = ?", formatTime(at), idHash); err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

// DeleteSession ends one session (logout).
func (au *Auth) DeleteSession(ctx context.Context, idHash string) error {
	if _, err := au.s.db.ExecContext(ctx, "DELETE FROM web_sessions WHERE id_hash = ?", idHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// DeleteSessions ends every session (a password change).
func (au *Auth) DeleteSessions(ctx context.Context) error {
	if _, err := au.s.db.ExecContext(ctx, "DELETE FROM web_sessions"); err != nil {
		return fmt.Errorf("delete sessions: %w", err)
	}
	return nil
}
