package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/scanwarden/scanwarden/config"
)

// Settings stored from the web page (migration 0007). The store keeps what
// it is given: a secret's value must arrive sealed.

// Settings are the settings stored from the web page (config.Saved: with
// Delete, SetSettings removes one, back to the file's value or the default).
type Settings struct{ s *Store }

// Settings returns the stored settings.
func (s *Store) Settings() *Settings { return &Settings{s: s} }

// SetSettings stores a section's values in one transaction. A secret's
// value must be sealed with Key(); one sealed with a key the database no
// longer records (rotated meanwhile) fails the whole call (*StaleKeyError).
func (g *Settings) SetSettings(ctx context.Context, vals []config.Saved) error {
	now := formatTime(g.s.now())
	return g.s.tx(ctx, func(tx *sql.Tx) error {
		for _, v := range vals {
			if v.Secret && !v.Delete {
				// sealed by the caller with Key(): still the database's?
				if err := sealingKeyCurrent(ctx, tx, g.s.key); err != nil {
					return fmt.Errorf("store setting %s.%s: %w", v.Section, v.Key, err)
				}
			}
			if v.Delete {
				if _, err := tx.ExecContext(ctx, "DELETE FROM stored_settings WHERE section = ? AND key = ?", v.Section, v.Key); err != nil {
					return fmt.Errorf("delete setting %s.%s: %w", v.Section, v.Key, err)
				}
				continue
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO stored_settings(section, key, value, secret, updated_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT(section, key) DO UPDATE SET value = excluded.value, secret = excluded.secret, updated_at = excluded.updated_at`,
				v.Section, v.Key, v.Value, snmpBool(v.Secret), now)
			if err != nil {
				return fmt.Errorf("store setting %s.%s: %w", v.Section, v.Key, err)
			}
		}
		return nil
	})
}

// StoredSettings returns every stored setting, by section and key.
func (g *Settings) StoredSettings(ctx context.Context) ([]config.Saved, error) {
	rows, err := g.s.db.QueryContext(ctx, "SELECT section, key, value, secret FROM stored_settings ORDER BY section, key")
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	defer rows.Close()
	var out []config.Saved
	for rows.Next() {
		var v config.Saved
		var secret int
		if err := rows.Scan(&v.Section, &v.Key, &v.Value, &secret); err != nil {
			return nil, fmt.Errorf("read settings: %w", err)
		}
		v.Secret = secret != 0
		out = append(out, v)
	}
	return out, rows.Err()
}

// DeleteSetting removes a stored setting (back to the default).
func (g *Settings) DeleteSetting(ctx context.Context, section, key string) error {
	if _, err := g.s.db.ExecContext(ctx, "DELETE FROM stored_settings WHERE section = ? AND key = ?", section, key); err != nil {
		return fmt.Errorf("delete setting %s.%s: %w", section, key, err)
	}
	return nil
}
