package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
)

// The device_profile rows of the fields that are only shown.
const (
	profileWorkstation = "workstation"
	profileUserForm    = "user_form"
)

// loadProfiles fills the profiles of devs (by row id) from device_profile;
// ids nil loads every device's.
func (dv *Devices) loadProfiles(ctx context.Context, q queryer, devs map[int64]*registry.Device) error {
	rows, err := q.QueryContext(ctx, `SELECT device_id, field, admin_value, seen_value, seen_at, seen_session FROM device_profile`)
	if err != nil {
		return fmt.Errorf("read device profiles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var field, admin, seen, at, session string
		if err := rows.Scan(&id, &field, &admin, &seen, &at, &session); err != nil {
			return fmt.Errorf("read device profiles: %w", err)
		}
		d := devs[id]
		if d == nil {
			continue
		}
		o := registry.Observed{Value: seen, Session: session}
		o.At, _ = parseTime(at)
		switch field {
		case profileWorkstation:
			d.Profile.Workstation = o
			continue
		case profileUserForm:
			d.Profile.UserForm = o
			continue
		}
		f := registry.ProfileField(field)
		if admin != "" {
			if d.Profile.Admin == nil {
				d.Profile.Admin = map[registry.ProfileField]string{}
			}
			d.Profile.Admin[f] = admin
		}
		if seen != "" {
			if d.Profile.Seen == nil {
				d.Profile.Seen = map[registry.ProfileField]registry.Observed{}
			}
			d.Profile.Seen[f] = o
		}
	}
	return rows.Err()
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// deviceID is the row id of the named device (ErrNotFound when none).
func deviceID(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, "SELECT id FROM devices WHERE name = ?", name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("device %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("device %q: %w", name, err)
	}
	return id, nil
}

// SetDeviceProfile sets the admin's values of a device's SMB profile
// (each in ParseProfileValue's spelling) and clears the fields in clear
// (their seen values and defaults apply again). Fields neither set nor
// cleared keep their setting. A profile its checks could not replay
// (smbcheck.Device.Validate) is refused with that field error.
func (dv *Devices) SetDeviceProfile(ctx context.Context, name string, set map[registry.ProfileField]string, clear []registry.ProfileField) error {
	if err := (registry.Profile{Admin: set}).Validate(); err != nil {
		return fmt.Errorf("device %s: %w", name, err)
	}
	for _, f := range clear {
		if _, err := registry.ParseProfileField(string(f)); err != nil {
			return fmt.Errorf("device %s: %w", name, err)
		}
	}
	// What its checks would replay must be replayable.
	d, err := dv.Device(ctx, name)
	if err != nil {
		return err
	}
	for _, f := range clear {
		delete(d.Profile.Admin, f)
	}
	if err := d.ClientWith(set).Validate(); err != nil {
		return fmt.Errorf("device %s: %w", name, err)
	}
	return dv.s.tx(ctx, func(tx *sql.Tx) error {
		id, err := deviceID(ctx, tx, name)
		if err != nil {
			return err
		}
		for _, f := range clear {
			if _, err := tx.ExecContext(ctx, `UPDATE device_profile SET admin_value = '' WHERE device_id = ? AND field = ?`, id, string(f)); err != nil {
				return fmt.Errorf("device %s: clear %s: %w", name, f, err)
			}
		}
		for f, v := range set {
			if _, err := tx.ExecContext(ctx, `INSERT INTO device_profile (device_id, field, admin_value) VALUES (?, ?, ?)
				ON CONFLICT(device_id, field) DO UPDATE SET admin_value = excluded.admin_value`, id, string(f), v); err != nil {
				return fmt.Errorf("device %s: set %s: %w", name, f, err)
			}
		}
		return nil
	})
}

// LearnDevice puts what an observation on the fallback share showed into
// the named device's profile as seen (registry.Profile.Learn); the
// admin's settings stay. changed: a seen value of its SMB client is not
// what it was (its checks replay differently now).
func (dv *Devices) LearnDevice(ctx context.Context, name string, o samba.Observation) (changed bool, err error) {
	learned := registry.Profile{}.Learn(o)
	err = dv.s.tx(ctx, func(tx *sql.Tx) error {
		changed = false
		id, err := deviceID(ctx, tx, name)
		if err != nil {
			return err
		}
		// smbd's log is read again from its start when the daemon starts:
		// an older observation never replaces a newer one.
		newer := map[string]bool{}
		was := map[string]string{}
		rows, err := tx.QueryContext(ctx, `SELECT field, seen_at, seen_value FROM device_profile WHERE device_id = ? AND seen_value != ''`, id)
		if err != nil {
			return fmt.Errorf("device %s: learn: %w", name, err)
		}
		for rows.Next() {
			var field, at, value string
			if err := rows.Scan(&field, &at, &value); err != nil {
				rows.Close()
				return fmt.Errorf("device %s: learn: %w", name, err)
			}
			if t, err := parseTime(at); err == nil && t.After(o.At) {
				newer[field] = true
			}
			was[field] = value
		}
		rows.Close()
		put := func(field string, v registry.Observed) error {
			if newer[field] {
				return nil
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO device_profile (device_id, field, seen_value, seen_at, seen_session) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT(device_id, field) DO UPDATE SET seen_value = excluded.seen_value, seen_at = excluded.seen_at,
					seen_session = excluded.seen_session`, id, field, v.Value, formatTime(v.At), v.Session)
			if err != nil {
				return fmt.Errorf("device %s: learn %s: %w", name, field, err)
			}
			return nil
		}
		for f, v := range learned.Seen {
			if err := put(string(f), v); err != nil {
				return err
			}
			changed = changed || (!newer[string(f)] && was[string(f)] != v.Value)
		}
		for _, x := range []struct {
			field string
			v     registry.Observed
		}{{profileWorkstation, learned.Workstation}, {profileUserForm, learned.UserForm}} {
			if x.v.Value != "" {
				if err := put(x.field, x.v); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return changed, err
}
