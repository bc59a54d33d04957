package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
)

// API tokens (migrations 0007, 0010: the scope): only their SHA-256 is stored.

// ErrTokenExists is returned when a token of that name exists.
var ErrTokenExists = errors.New("a token with that name exists")

// ErrNoToken is returned when no token has that name.
var ErrNoToken = errors.New("no such token")

// CreateToken stores a new token.
func (au *Auth) CreateToken(ctx context.Context, t scanwarden.APIToken) error {
	if t.Scope == "" {
		t.Scope = scanwarden.ScopeRead
	}
	if _, ok := scanwarden.ParseTokenScope(string(t.Scope)); !ok {
		return fmt.Errorf("create token %s: scope %q is not metrics, read or admin", t.Name, t.Scope)
	}
	_, err := au.s.db.ExecContext(ctx, "INSERT INTO api_tokens(name, hash, scope, created) VALUES (?, ?, ?, ?)",
		t.Name, t.Hash, string(t.Scope), formatTime(t.Created))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed: api_tokens.name") {
			return fmt.Errorf("create token %s: %w", t.Name, ErrTokenExists)
		}
		return fmt.Errorf("create token %s: %w", t.Name, err)
	}
	return nil
}

// TokenByHash finds a token by its hash.
func (au *Auth) TokenByHash(ctx context.Context, hash string) (scanwarden.APIToken, bool, error) {
	rows, err := au.s.db.QueryContext(ctx, "SELECT name, hash, scope, created, last_used FROM api_tokens WHERE hash = ?", hash)
	if err != nil {
		return scanwarden.APIToken{}, false, fmt.Errorf("read token: %w", err)
	}
	ts, err := scanTokens(rows)
	if err != nil || len(ts) == 0 {
		return scanwarden.APIToken{}, false, err
	}
	return ts[0], true, nil
}

// TouchToken records a token's use.
func (au *Auth) TouchToken(ctx context.Context, name string, at time.Time) error {
	if _, err := au.s.db.ExecContext(ctx, "UPDATE api_tokens SET last_used = ? WHERE name = ?", formatTime(at), name); err != nil {
		return fmt.Errorf("touch token: %w", err)
	}
	return nil
}

// Tokens lists the tokens by name.
func (au *Auth) Tokens(ctx context.Context) ([]scanwarden.APIToken, error) {
	rows, err := au.s.db.QueryContext(ctx, "SELECT name, hash, scope, created, last_used FROM api_tokens ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("read tokens: %w", err)
	}
	return scanTokens(rows)
}

// DeleteTokens revokes every token and says how many there were.
func (au *Auth) DeleteTokens(ctx context.Context) (int, error) {
	res, err := au.s.db.ExecContext(ctx, "DELETE FROM api_tokens")
	if err != nil {
		return 0, fmt.Errorf("delete tokens: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// DeleteToken revokes a token; ErrNoToken when there is none.
func (au *Auth) DeleteToken(ctx context.Context, name string) error {
	res, err := au.s.db.ExecContext(ctx, "DELETE FROM api_tokens WHERE name = ?", name)
	if err != nil {
		return fmt.Errorf("delete token %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete token %s: %w", name, ErrNoToken)
	}
	return nil
}

func scanTokens(rows *sql.Rows) ([]scanwarden.APIToken, error) {
	defer rows.Close()
	var out []scanwarden.APIToken
	for rows.Next() {
		var t scanwarden.APIToken
		var created, used string
		if err := rows.Scan(&t.Name, &t.Hash, &t.Scope, &created, &used); err != nil {
			return nil, fmt.Errorf("read token: %w", err)
		}
		var err error
		if t.Created, err = parseTime(created); err != nil {
			return nil, fmt.Errorf("api_tokens.created %q: %w", created, err)
		}
		if t.LastUsed, err = parseOptTime(used); err != nil {
			return nil, fmt.Errorf("api_tokens.last_used %q: %w", used, err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
