package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
)

// Destinations keeps the registry's destinations (passwords sealed), the
// address-book imports that fill it and each destination's bridge.
type Destinations struct{ s *Store }

// Destinations returns the registry's destinations.
func (s *Store) Destinations() *Destinations { return &Destinations{s: s} }

const destCols = `t.id, t.name, t.host, t.port, t.share, t.path, t.user_name, t.password_sealed, coalesce(d.name, ''),
	t.workstation, t.auth, t.address_book_id, t.display_name, t.source, t.created_at, t.updated_at, t.password_unreadable, t.bridged_at`

const destFrom = " FROM destinations t LEFT JOIN devices d ON d.id = t.device_id"

func (dst *Destinations) scanDestination(r scanner) (int64, registry.Destination, error) {
	var t registry.Destination
	var id int64
	var pw []byte
	var src, created, updated, auth, bridged string
	if err := r.Scan(&id, &t.Name, &t.Host, &t.Port, &t.Share, &t.Path, &t.User, &pw, &t.Device, &t.Workstation, &auth,
		&t.AddressBookID, &t.DisplayName, &src, &created, &updated, &t.PasswordUnreadable, &bridged); err != nil {
		return 0, t, err
	}
	v, err := openSecret(dst.s.key, pw, "destination.password")
	if err != nil {
		return 0, t, fmt.Errorf("destination %s: password: %w", t.Name, err)
	}
	t.Password = scanwarden.NewSecret(v)
	t.Source = registry.Source(src)
	t.Auth = scanwarden.Auth(auth)
	t.Created, _ = parseTime(created)
	t.Updated, _ = parseTime(updated)
	t.BridgedAt, _ = parseOptTime(bridged)
	return id, t, nil
}

// PutDestination adds a destination or replaces the one of the same name.
// Its device, when named, must exist.
func (dst *Destinations) PutDestination(ctx context.Context, t registry.Destination) error {
	if t.Source == "" {
		t.Source = registry.SourceAdded
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if err := t.CheckLinkLocal(dst.s.linkLocal.Load()); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	return dst.s.tx(ctx, func(tx *sql.Tx) error {
		if err := sealingKeyCurrent(ctx, tx, dst.s.key); err != nil {
			return fmt.Errorf("destination %s: %w", t.Name, err)
		}
		return dst.putDestination(ctx, tx, t)
	})
}

func (dst *Destinations) putDestination(ctx context.Context, tx *sql.Tx, t registry.Destination) error {
	pw, err := sealSecret(dst.s.key, t.Password.Reveal(), "destination.password")
	if err != nil {
		return fmt.Errorf("destination %s: %w", t.Name, err)
	}
	var dev any
	if t.Device != "" {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM devices WHERE name = ?", t.Device).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("destination %s: device %q: %w", t.Name, t.Device, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("destination %s: %w", t.Name, err)
		}
		dev = id
	}
	now := formatTime(dst.s.now())
	_, err = tx.ExecContext(ctx, `INSERT INTO destinations (name, host, port, share, path, user_name, password_sealed,
			device_id, workstation, auth, address_book_id, display_name, source, created_at, updated_at, password_unreadable)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET host=excluded.host, port=excluded.port, share=excluded.share, path=excluded.path,
			user_name=excluded.user_name, password_sealed=excluded.password_sealed, device_id=excluded.device_id,
			workstation=excluded.workstation, auth=excluded.auth, address_book_id=excluded.address_book_id,
			display_name=excluded.display_name, source=excluded.source, updated_at=excluded.updated_at,
			password_unreadable=excluded.password_unreadable`,
		t.Name, t.Host, t.Port, t.Share, t.Path, t.User, pw, dev, t.Workstation, authColumn(t.Auth), t.AddressBookID, t.DisplayName,
		string(t.Source), now, now, t.PasswordUnreadable)
	if err != nil {
		return fmt.Errorf("put destination %s: %w", t.Name, err)
	}
	return nil
}

// SetBridged bridges the named destination (on) or ends its bridge, and
// reports whether that changed anything (ErrNotFound when none). An edit
// or an import of the destination keeps it as it is.
func (dst *Destinations) SetBridged(ctx context.Context, name string, on bool) (changed bool, err error) {
	err = dst.s.tx(ctx, func(tx *sql.Tx) error {
		var was string
		err := tx.QueryRowContext(ctx, "SELECT bridged_at FROM destinations WHERE name = ?", name).Scan(&was)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("destination %q: %w", name, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read destination %q: %w", name, err)
		}
		if (was != "") == on {
			return nil
		}
		at := ""
		if on {
			at = formatTime(dst.s.now())
		}
		if _, err := tx.ExecContext(ctx, "UPDATE destinations SET bridged_at = ? WHERE name = ?", at, name); err != nil {
			return fmt.Errorf("bridge destination %q: %w", name, err)
		}
		changed = true
		return nil
	})
	return changed, err
}

// Destination returns the named destination, password included
// (ErrNotFound when none).
func (dst *Destinations) Destination(ctx context.Context, name string) (registry.Destination, error) {
	_, t, err := dst.scanDestination(dst.s.db.QueryRowContext(ctx, "SELECT "+destCols+destFrom+" WHERE t.name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("destination %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("read destination %q: %w", name, err)
	}
	return t, nil
}

// Destinations returns every destination of device ("" for all), by name.
func (dst *Destinations) Destinations(ctx context.Context, device string) ([]registry.Destination, error) {
	rows, err := dst.s.db.QueryContext(ctx, "SELECT "+destCols+destFrom+" WHERE (? = '' OR d.name = ?) ORDER BY t.name", device, device)
	if err != nil {
		return nil, fmt.Errorf("list destinations: %w", err)
	}
	defer rows.Close()
	var out []registry.Destination
	for rows.Next() {
		_, t, err := dst.scanDestination(rows)
		if err != nil {
			return nil, fmt.Errorf("list destinations: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Targets returns every destination of device ("" for all), by name, each
// with its device and the target to replay (registry.Resolve): what the
// monitor checks, the receiver delivers to and the CLI replays.
func (dst *Destinations) Targets(ctx context.Context, device string) ([]registry.Resolved, error) {
	ds, err := dst.Destinations(ctx, device)
	if err != nil {
		return nil, err
	}
	devs, err := dst.s.Devices().Devices(ctx)
	if err != nil {
		return nil, err
	}
	return registry.Resolve(ds, devs), nil
}

// Target is the named destination resolved as Targets resolves each
// (ErrNotFound when none).
func (dst *Destinations) Target(ctx context.Context, name string) (registry.Resolved, error) {
	d, err := dst.Destination(ctx, name)
	if err != nil {
		return registry.Resolved{}, err
	}
	var devs []registry.Device
	if d.Device != "" {
		dev, err := dst.s.Devices().Device(ctx, d.Device)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return registry.Resolved{}, err
		}
		if err == nil {
			devs = append(devs, dev)
		}
	}
	return registry.Resolve([]registry.Destination{d}, devs)[0], nil
}

// Deliveries is the registry as the receiver's list of destinations: each
// with its folder on the share and its target (Targets).
func (dst *Destinations) Deliveries() receiver.Destinations { return deliveries{dst} }

type deliveries struct{ dst *Destinations }

func (d deliveries) Destinations(ctx context.Context) ([]receiver.Destination, error) {
	rs, err := d.dst.Targets(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]receiver.Destination, 0, len(rs))
	for _, r := range rs {
		out = append(out, receiver.Destination{Name: r.Name, Folder: r.Folder(), Target: r.Target})
	}
	return out, nil
}

// RemoveDestination deletes a destination and its reports.
func (dst *Destinations) RemoveDestination(ctx context.Context, name string) error {
	return dst.s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM destinations WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("remove destination %q: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("destination %q: %w", name, ErrNotFound)
		}
		// Out of its incident group: a group it alone held closes, untold.
		_, err = regroup(ctx, tx, dst.s.now(), func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice) {
			return incident.Regroup(gs, name, nil, dst.s.now())
		})
		return err
	})
}

// authColumn is a destination's auth as stored: "ntlm" for the default.
func authColumn(a scanwarden.Auth) string {
	if a == "" {
		return string(scanwarden.AuthNTLM)
	}
	return string(a)
}
