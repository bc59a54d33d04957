package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/seal"
)

// ErrLocked is returned by methods that read or write a secret before
// UnlockKey.
var ErrLocked = errors.New("secrets are locked: no key loaded")

// KeyError says why the data dir's key cannot be used; its message tells
// the operator what to do.
type KeyError struct {
	Path     string // the key file looked for
	WantID   string // the id of the key the data dir's secrets are sealed with
	GotID    string // the id of the key file found ("" when missing)
	Database string
}

func (e *KeyError) Error() string {
	if e.GotID == "" {
		return fmt.Sprintf("key file %s is missing, but the secrets in %s are sealed with key %s: restore that key file "+
			"(or point --key-file / %s at it); a new key cannot open them, so none is made", e.Path, e.Database, e.WantID, seal.EnvKeyFile)
	}
	return fmt.Sprintf("key file %s holds key %s, but the secrets in %s are sealed with key %s: use the right key file "+
		"(--key-file / %s)", e.Path, e.GotID, e.Database, e.WantID, seal.EnvKeyFile)
}

const settingKeyID = "seal_key_id"

// UnlockKey loads the key that seals this data dir's secrets from keyPath
// (seal.Resolve picks it) and keeps it for the store's secret columns. On
// first use — no key recorded and no sealed value stored — a missing key
// file is created (mode 0600) and its id recorded. A missing or different
// key for a data dir that already has one is a *KeyError: the data dir is
// never re-keyed behind the operator's back. A rotation interrupted after
// its commit (the new key still in keyPath+".new") is finished here.
func (s *Store) UnlockKey(ctx context.Context, keyPath string) (*seal.Key, error) {
	want, err := keyID(ctx, s.db)
	if err != nil {
		return nil, err
	}
	if s.readOnly {
		k, err := loadKey(keyPath, want, s.path)
		if err != nil {
			return nil, err
		}
		s.key = k
		return k, nil
	}
	k, err := seal.Load(keyPath)
	switch {
	case errors.Is(err, seal.ErrNoKey) && want == "":
		n, err := sealedCount(ctx, s.db)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("unlock secrets: %s holds %d sealed values but no key id; refusing to make a new key", s.path, n)
		}
		k, err = seal.Create(keyPath)
		if errors.Is(err, os.ErrExist) { // another process made it first
			k, err = seal.Load(keyPath)
		}
		if err != nil {
			return nil, fmt.Errorf("unlock secrets: %w", err)
		}
	case errors.Is(err, seal.ErrNoKey):
		if nk, nerr := seal.Load(keyPath + ".new"); nerr == nil && nk.ID() == want {
			if k, err = finishRotation(keyPath); err != nil {
				return nil, err
			}
			break
		}
		return nil, &KeyError{Path: keyPath, WantID: want, Database: s.path}
	case err != nil:
		return nil, fmt.Errorf("unlock secrets: %w", err)
	}
	if want != "" && k.ID() != want {
		nk, nerr := seal.Load(keyPath + ".new")
		if nerr != nil || nk.ID() != want {
			return nil, &KeyError{Path: keyPath, WantID: want, GotID: k.ID(), Database: s.path}
		}
		if k, err = finishRotation(keyPath); err != nil {
			return nil, err
		}
	}
	if want == "" {
		err := s.tx(ctx, func(tx *sql.Tx) error {
			var cur []byte
			err := tx.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", settingKeyID).Scan(&cur)
			if err == nil {
				if string(cur) != k.ID() {
					return &KeyError{Path: keyPath, WantID: string(cur), GotID: k.ID(), Database: s.path}
				}
				return nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			_, err = tx.ExecContext(ctx, "INSERT INTO settings(key, value) VALUES (?, ?)", settingKeyID, []byte(k.ID()))
			return err
		})
		if err != nil {
			var ke *KeyError
			if errors.As(err, &ke) {
				return nil, ke
			}
			return nil, fmt.Errorf("unlock secrets: record key id: %w", err)
		}
	}
	s.key = k
	return k, nil
}

// loadKey is UnlockKey for a store opened read-only: the key is loaded
// and checked against the data dir's (want, recorded in database), never
// made, rotated or recorded.
func loadKey(keyPath, want, database string) (*seal.Key, error) {
	k, err := seal.Load(keyPath)
	switch {
	case errors.Is(err, seal.ErrNoKey) && want == "":
		return nil, fmt.Errorf("unlock secrets: %w (a command that only reads makes none: the daemon makes it at its first start)", err)
	case errors.Is(err, seal.ErrNoKey):
		return nil, &KeyError{Path: keyPath, WantID: want, Database: database}
	case err != nil:
		return nil, fmt.Errorf("unlock secrets: %w", err)
	case want != "" && k.ID() != want:
		return nil, &KeyError{Path: keyPath, WantID: want, GotID: k.ID(), Database: database}
	}
	return k, nil
}

// Key is the key loaded by UnlockKey (nil before).
func (s *Store) Key() *seal.Key { return s.key }

// finishRotation puts KEY.new in place of KEY and loads it.
func finishRotation(keyPath string) (*seal.Key, error) {
	if err := os.Rename(keyPath+".new", keyPath); err != nil {
		return nil, fmt.Errorf("finish the key rotation: %w", err)
	}
	k, err := seal.Load(keyPath)
	if err != nil {
		return nil, fmt.Errorf("finish the key rotation: %w", err)
	}
	return k, nil
}

// keyID is the id of the key db's secrets are sealed with ("" when none
// is recorded).
func keyID(ctx context.Context, db *sql.DB) (string, error) {
	var v []byte
	err := db.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", settingKeyID).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("unlock secrets: read key id: %w", err)
	}
	return string(v), nil
}

// sealedColumns lists every column that holds a sealed value, with its
// seal label: rotation walks it, and a test checks it against the schema.
var sealedColumns = []struct{ table, column, label string }{
	{"destinations", "password_sealed", "destination.password"},
	{"devices", "snmp_community", "device.snmp_community"},
	{"devices", "snmp_v3_auth", "device.snmp_v3_auth"},
	{"devices", "snmp_v3_priv", "device.snmp_v3_priv"},
}

// sealedCount counts the sealed values db holds.
func sealedCount(ctx context.Context, db *sql.DB) (int, error) {
	var total int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM stored_settings WHERE secret != 0").Scan(&total); err != nil {
		return 0, fmt.Errorf("count sealed values: %w", err)
	}
	for _, c := range sealedColumns {
		var n int
		q := fmt.Sprintf("SELECT count(*) FROM %s WHERE %s IS NOT NULL", c.table, c.column)
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return 0, fmt.Errorf("count sealed values: %w", err)
		}
		total += n
	}
	return total, nil
}

// SettingLabel is the seal label of a secret stored from the settings
// page: the daemon seals with it, rotation re-seals with it.
func SettingLabel(section, key string) string { return "setting:" + section + "." + key }

// UnreadableError names the sealed values that do not open with the key: a
// rotation then changes nothing.
type UnreadableError struct {
	Names []string
	KeyID string
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%d sealed value(s) do not open with key %s: %s; re-enter them (or remove them) and rotate again",
		len(e.Names), e.KeyID, strings.Join(e.Names, ", "))
}

// RotateKey re-encrypts every sealed value — the registry's columns and the
// secrets stored from the settings page — under a new key in one
// transaction; if any value does not open with the old key, nothing is
// changed and the error (*UnreadableError) names each. The new key is written to KEY.new first, the database
// committed, then KEY.new renamed over KEY; a crash in between is finished
// by the next UnlockKey. It returns the old and new key ids and how many
// values were re-sealed.
func (s *Store) RotateKey(ctx context.Context) (oldID, newID string, n int, err error) {
	old := s.key
	if old == nil {
		return "", "", 0, ErrLocked
	}
	path := old.Path()
	if path == "" {
		return "", "", 0, errors.New("rotate key: the key has no file")
	}
	nk, tmp, err := writeNextKey(path, old)
	if err != nil {
		return "", "", 0, fmt.Errorf("rotate key: %w", err)
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		cols, unreadable, err := resealColumns(ctx, tx, old, nk)
		if err != nil {
			return err
		}
		sets, more, err := resealSettings(ctx, tx, old, nk)
		if err != nil {
			return err
		}
		n = cols + sets
		if unreadable = append(unreadable, more...); len(unreadable) > 0 {
			return &UnreadableError{Names: unreadable, KeyID: old.ID()}
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, settingKeyID, []byte(nk.ID()))
		return err
	})
	if err != nil {
		os.Remove(tmp)
		return "", "", 0, fmt.Errorf("rotate key: %w", err)
	}
	if nk, err = finishRotation(path); err != nil {
		return "", "", 0, err
	}
	s.key = nk
	return old.ID(), nk.ID(), n, nil
}

// writeNextKey makes the rotation's new key and writes it beside the key
// file (path.new), replacing one left by a rotation that never committed.
func writeNextKey(path string, old *seal.Key) (*seal.Key, string, error) {
	nk, err := seal.New()
	if err != nil {
		return nil, "", err
	}
	tmp := path + ".new"
	if stale, err := seal.Load(tmp); err == nil && stale.ID() != old.ID() {
		os.Remove(tmp) // left by a rotation that never committed
	} else if err != nil && !errors.Is(err, seal.ErrNoKey) {
		return nil, "", err
	}
	if err := nk.WriteFile(tmp); err != nil {
		return nil, "", err
	}
	return nk, tmp, nil
}

// resealColumns re-seals every sealed registry column from old to nk in tx;
// it names the values old cannot open instead of failing on the first.
func resealColumns(ctx context.Context, tx *sql.Tx, old, nk *seal.Key) (n int, unreadable []string, err error) {
	type row struct {
		id   int64
		name string
		v    []byte
	}
	for _, c := range sealedColumns {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf("SELECT id, name, %s FROM %s WHERE %s IS NOT NULL", c.column, c.table, c.column))
		if err != nil {
			return 0, nil, err
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.name, &r.v); err != nil {
				rows.Close()
				return 0, nil, err
			}
			all = append(all, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, nil, err
		}
		for _, r := range all {
			pt, err := old.Open(r.v, c.label)
			if err != nil {
				unreadable = append(unreadable, fmt.Sprintf("%s %s (%s)", strings.TrimSuffix(c.table, "s"), r.name, c.column))
				continue
			}
			if _, err := tx.ExecContext(ctx, fmt.Sprintf("UPDATE %s SET %s = ? WHERE id = ?", c.table, c.column),
				nk.Seal(pt, c.label), r.id); err != nil {
				return 0, nil, err
			}
			n++
		}
	}
	return n, unreadable, nil
}

// resealSettings re-seals the secrets saved from the settings page (sealed
// by the daemon under "setting:SECTION.KEY") from old to nk in tx.
func resealSettings(ctx context.Context, tx *sql.Tx, old, nk *seal.Key) (n int, unreadable []string, err error) {
	rows, err := tx.QueryContext(ctx, "SELECT section, key, value FROM stored_settings WHERE secret != 0")
	if err != nil {
		return 0, nil, err
	}
	var settings []config.Saved
	for rows.Next() {
		var v config.Saved
		if err := rows.Scan(&v.Section, &v.Key, &v.Value); err != nil {
			rows.Close()
			return 0, nil, err
		}
		settings = append(settings, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	for _, v := range settings {
		label := SettingLabel(v.Section, v.Key)
		pt, err := old.Open([]byte(v.Value), label)
		if err != nil {
			unreadable = append(unreadable, "setting "+v.Section+"."+v.Key)
			continue
		}
		if _, err := tx.ExecContext(ctx, "UPDATE stored_settings SET value = ? WHERE section = ? AND key = ?",
			string(nk.Seal(pt, label)), v.Section, v.Key); err != nil {
			return 0, nil, err
		}
		n++
	}
	return n, unreadable, nil
}

// StaleKeyError says this process seals with a key the database no
// longer records: `secrets rotate` replaced it while the process ran. A
// value sealed with it would be stored and never open again (after the
// restart, or at the next rotation), so the write is refused.
type StaleKeyError struct{ Have, Database string }

func (e *StaleKeyError) Error() string {
	return fmt.Sprintf("the sealing key was replaced while this process ran (it holds key %s, the database's is %s: secrets rotate); restart scanwarden to load the new key — nothing was stored",
		e.Have, e.Database)
}

// sealingKeyCurrent checks, in the transaction that stores a sealed value,
// that k, the key it was sealed with, is still the database's (no key
// loaded: nothing is sealed with one).
func sealingKeyCurrent(ctx context.Context, tx *sql.Tx, k *seal.Key) error {
	if k == nil {
		return nil
	}
	var v []byte
	err := tx.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", settingKeyID).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("read key id: %w", err)
	case string(v) != k.ID():
		return &StaleKeyError{Have: k.ID(), Database: string(v)}
	}
	return nil
}

// sealSecret seals v with k (ErrLocked without a key).
func sealSecret(k *seal.Key, v string, label string) ([]byte, error) {
	if k == nil {
		return nil, ErrLocked
	}
	return k.Seal([]byte(v), label), nil
}

// openSecret opens b with k (ErrLocked without a key).
func openSecret(k *seal.Key, b []byte, label string) (string, error) {
	if k == nil {
		return "", ErrLocked
	}
	pt, err := k.Open(b, label)
	if err != nil {
		return "", err
	}
	return string(pt), nil
}
