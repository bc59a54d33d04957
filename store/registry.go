package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/snmp"
)

// Devices keeps the registry's devices (their SNMP settings, secrets
// sealed) and each device's SMB client profile.
type Devices struct{ s *Store }

// Devices returns the registry's devices.
func (s *Store) Devices() *Devices { return &Devices{s: s} }

// ErrNotFound is returned (wrapped) for a device or destination name the
// registry does not hold.
var ErrNotFound = errors.New("not found")

const deviceCols = `d.id, d.name, d.address, d.snmp_version, d.snmp_community, d.snmp_v3_user, d.snmp_v3_auth_proto,
	d.snmp_v3_auth, d.snmp_v3_priv_proto, d.snmp_v3_priv, d.serial, d.model, d.sys_name, d.workstation,
	d.created_at, d.updated_at`

type scanner interface{ Scan(...any) error }

func (dv *Devices) scanDevice(r scanner) (int64, registry.Device, error) {
	var d registry.Device
	var id int64
	var comm, auth, priv []byte
	var created, updated string
	if err := r.Scan(&id, &d.Name, &d.Address, &d.SNMP.Version, &comm, &d.SNMP.V3User, &d.SNMP.V3AuthProto, &auth,
		&d.SNMP.V3PrivProto, &priv, &d.Serial, &d.Model, &d.SysName, &d.Workstation, &created, &updated); err != nil {
		return 0, d, err
	}
	for _, f := range []struct {
		b     []byte
		dst   *scanwarden.Secret
		label string
	}{{comm, &d.SNMP.Community, "device.snmp_community"}, {auth, &d.SNMP.V3Auth, "device.snmp_v3_auth"}, {priv, &d.SNMP.V3Priv, "device.snmp_v3_priv"}} {
		if f.b == nil {
			continue
		}
		v, err := openSecret(dv.s.key, f.b, f.label)
		if err != nil {
			return 0, d, fmt.Errorf("device %s: %s: %w", d.Name, f.label, err)
		}
		*f.dst = scanwarden.NewSecret(v)
	}
	d.Created, _ = parseTime(created)
	d.Updated, _ = parseTime(updated)
	return id, d, nil
}

// sealOptional seals a secret, NULL when empty.
func (dv *Devices) sealOptional(v scanwarden.Secret, label string) (any, error) {
	if v.IsZero() {
		return nil, nil
	}
	return sealSecret(dv.s.key, v.Reveal(), label)
}

// PutDevice adds a device or updates the one of the same name (every field
// is replaced; its destinations stay).
func (dv *Devices) PutDevice(ctx context.Context, d registry.Device) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("device: %w", err)
	}
	return dv.s.tx(ctx, func(tx *sql.Tx) error {
		if err := sealingKeyCurrent(ctx, tx, dv.s.key); err != nil {
			return fmt.Errorf("device %s: %w", d.Name, err)
		}
		return dv.putDevice(ctx, tx, d)
	})
}

func (dv *Devices) putDevice(ctx context.Context, tx *sql.Tx, d registry.Device) error {
	var vals []any
	for _, f := range []struct {
		v     scanwarden.Secret
		label string
	}{{d.SNMP.Community, "device.snmp_community"}, {d.SNMP.V3Auth, "device.snmp_v3_auth"}, {d.SNMP.V3Priv, "device.snmp_v3_priv"}} {
		b, err := dv.sealOptional(f.v, f.label)
		if err != nil {
			return fmt.Errorf("device %s: %w", d.Name, err)
		}
		vals = append(vals, b)
	}
	now := formatTime(dv.s.now())
	_, err := tx.ExecContext(ctx, `INSERT INTO devices (name, address, snmp_version, snmp_community, snmp_v3_user,
			snmp_v3_auth_proto, snmp_v3_auth, snmp_v3_priv_proto, snmp_v3_priv, serial, model, sys_name, workstation,
			created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET address=excluded.address, snmp_version=excluded.snmp_version,
			snmp_community=excluded.snmp_community, snmp_v3_user=excluded.snmp_v3_user,
			snmp_v3_auth_proto=excluded.snmp_v3_auth_proto, snmp_v3_auth=excluded.snmp_v3_auth,
			snmp_v3_priv_proto=excluded.snmp_v3_priv_proto, snmp_v3_priv=excluded.snmp_v3_priv, serial=excluded.serial,
			model=excluded.model, sys_name=excluded.sys_name, workstation=excluded.workstation, updated_at=excluded.updated_at`,
		d.Name, d.Address, d.SNMP.Version, vals[0], d.SNMP.V3User, d.SNMP.V3AuthProto, vals[1], d.SNMP.V3PrivProto, vals[2],
		d.Serial, d.Model, d.SysName, d.Workstation, now, now)
	if err != nil {
		return fmt.Errorf("put device %s: %w", d.Name, err)
	}
	return nil
}

// Device returns the named device (ErrNotFound when none).
func (dv *Devices) Device(ctx context.Context, name string) (registry.Device, error) {
	id, d, err := dv.scanDevice(dv.s.db.QueryRowContext(ctx, "SELECT "+deviceCols+" FROM devices d WHERE d.name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("device %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("read device %q: %w", name, err)
	}
	if err := dv.loadProfiles(ctx, dv.s.db, map[int64]*registry.Device{id: &d}); err != nil {
		return d, err
	}
	return d, nil
}

// Devices returns every device, by name.
func (dv *Devices) Devices(ctx context.Context) ([]registry.Device, error) {
	rows, err := dv.s.db.QueryContext(ctx, "SELECT "+deviceCols+" FROM devices d ORDER BY d.name")
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	var out []registry.Device
	var ids []int64
	for rows.Next() {
		id, d, err := dv.scanDevice(rows)
		if err != nil {
			return nil, fmt.Errorf("list devices: %w", err)
		}
		out = append(out, d)
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	rows.Close()
	byID := make(map[int64]*registry.Device, len(out))
	for i, id := range ids {
		byID[id] = &out[i]
	}
	if err := dv.loadProfiles(ctx, dv.s.db, byID); err != nil {
		return nil, err
	}
	return out, nil
}

// DeviceInUseError refuses to remove a device that still has destinations.
type DeviceInUseError struct {
	Device       string
	Destinations int
}

func (e *DeviceInUseError) Error() string {
	return fmt.Sprintf("device %s still has %d destinations: remove them first, or remove the device with its destinations", e.Device, e.Destinations)
}

// RemoveDevice deletes a device. With withDestinations its destinations go
// too; without, a device that has any is refused (*DeviceInUseError).
func (dv *Devices) RemoveDevice(ctx context.Context, name string, withDestinations bool) error {
	return dv.s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM devices WHERE name = ?", name).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("device %q: %w", name, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("remove device %q: %w", name, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM destinations WHERE device_id = ?", id).Scan(&n); err != nil {
			return fmt.Errorf("remove device %q: %w", name, err)
		}
		if n > 0 && !withDestinations {
			return &DeviceInUseError{Device: name, Destinations: n}
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM destinations WHERE device_id = ?", id); err != nil {
			return fmt.Errorf("remove device %q: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM device_profile WHERE device_id = ?", id); err != nil {
			return fmt.Errorf("remove device %q: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM devices WHERE id = ?", id); err != nil {
			return fmt.Errorf("remove device %q: %w", name, err)
		}
		return nil
	})
}

// learnDevice fills in what SNMP learnt (serial, model, sysName) on the
// registry devices polled at inv.Address: every spelling of that address
// (registry.Address.SNMPAddr: a device stored as HOST alone is at port
// 161). Empty values do not erase stored ones.
func learnDevice(ctx context.Context, tx *sql.Tx, inv snmp.Inventory, at string) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, address FROM devices WHERE address != ''`)
	if err != nil {
		return fmt.Errorf("registry devices at %s: %w", inv.Address, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var addr string
		if err := rows.Scan(&id, &addr); err != nil {
			rows.Close()
			return fmt.Errorf("registry devices at %s: %w", inv.Address, err)
		}
		if registry.Address(addr).Same(registry.Address(inv.Address)) {
			ids = append(ids, id)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("registry devices at %s: %w", inv.Address, err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE devices SET
				serial = CASE WHEN ? != '' THEN ? ELSE serial END,
				model = CASE WHEN ? != '' THEN ? ELSE model END,
				sys_name = CASE WHEN ? != '' THEN ? ELSE sys_name END,
				updated_at = ?
			WHERE id = ?`,
			inv.Serial, inv.Serial, inv.Model, inv.Model, inv.SysName, inv.SysName, at, id); err != nil {
			return fmt.Errorf("registry device at %s: %w", inv.Address, err)
		}
	}
	return nil
}
