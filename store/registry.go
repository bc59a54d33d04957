package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/scanwarden/scanwarden/incident"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
)

// ErrNotFound is returned (wrapped) for a device or destination name the
// registry does not hold.
var ErrNotFound = errors.New("not found")

// ReportHistory is how many reports are kept per destination.
const ReportHistory = 50

// --- devices ---

const deviceCols = `d.id, d.name, d.address, d.snmp_version, d.snmp_community, d.snmp_v3_user, d.snmp_v3_auth_proto,
	d.snmp_v3_auth, d.snmp_v3_priv_proto, d.snmp_v3_priv, d.serial, d.model, d.sys_name, d.workstation,
	d.created_at, d.updated_at`

type scanner interface{ Scan(...any) error }

func (s *Store) scanDevice(r scanner) (int64, registry.Device, error) {
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
		v, err := s.openSecret(f.b, f.label)
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
func (s *Store) sealOptional(v scanwarden.Secret, label string) (any, error) {
	if v.IsZero() {
		return nil, nil
	}
	return s.sealSecret(v.Reveal(), label)
}

// PutDevice adds a device or updates the one of the same name (every field
// is replaced; its destinations stay).
func (s *Store) PutDevice(ctx context.Context, d registry.Device) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("device: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.sealingKeyCurrent(ctx, tx); err != nil {
			return fmt.Errorf("device %s: %w", d.Name, err)
		}
		return s.putDevice(ctx, tx, d)
	})
}

func (s *Store) putDevice(ctx context.Context, tx *sql.Tx, d registry.Device) error {
	var vals []any
	for _, f := range []struct {
		v     scanwarden.Secret
		label string
	}{{d.SNMP.Community, "device.snmp_community"}, {d.SNMP.V3Auth, "device.snmp_v3_auth"}, {d.SNMP.V3Priv, "device.snmp_v3_priv"}} {
		b, err := s.sealOptional(f.v, f.label)
		if err != nil {
			return fmt.Errorf("device %s: %w", d.Name, err)
		}
		vals = append(vals, b)
	}
	now := formatTime(s.now())
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
func (s *Store) Device(ctx context.Context, name string) (registry.Device, error) {
	id, d, err := s.scanDevice(s.db.QueryRowContext(ctx, "SELECT "+deviceCols+" FROM devices d WHERE d.name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("device %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("read device %q: %w", name, err)
	}
	if err := s.loadProfiles(ctx, s.db, map[int64]*registry.Device{id: &d}); err != nil {
		return d, err
	}
	return d, nil
}

// Devices returns every device, by name.
func (s *Store) Devices(ctx context.Context) ([]registry.Device, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+deviceCols+" FROM devices d ORDER BY d.name")
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	var out []registry.Device
	var ids []int64
	for rows.Next() {
		id, d, err := s.scanDevice(rows)
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
	if err := s.loadProfiles(ctx, s.db, byID); err != nil {
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
func (s *Store) RemoveDevice(ctx context.Context, name string, withDestinations bool) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
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

// --- destinations ---

const destCols = `t.id, t.name, t.host, t.port, t.share, t.path, t.user_name, t.password_sealed, coalesce(d.name, ''),
	t.workstation, t.auth, t.address_book_id, t.display_name, t.source, t.created_at, t.updated_at, t.password_unreadable, t.bridged_at`

const destFrom = " FROM destinations t LEFT JOIN devices d ON d.id = t.device_id"

func (s *Store) scanDestination(r scanner) (int64, registry.Destination, error) {
	var t registry.Destination
	var id int64
	var pw []byte
	var src, created, updated, auth, bridged string
	if err := r.Scan(&id, &t.Name, &t.Host, &t.Port, &t.Share, &t.Path, &t.User, &pw, &t.Device, &t.Workstation, &auth,
		&t.AddressBookID, &t.DisplayName, &src, &created, &updated, &t.PasswordUnreadable, &bridged); err != nil {
		return 0, t, err
	}
	v, err := s.openSecret(pw, "destination.password")
	if err != nil {
		return 0, t, fmt.Errorf("destination %s: password: %w", t.Name, err)
	}
	t.Password = scanwarden.NewSecret(v)
	t.Source = registry.Source(src)
	t.Auth = smbcheck.Auth(auth)
	t.Created, _ = parseTime(created)
	t.Updated, _ = parseTime(updated)
	if bridged != "" {
		t.BridgedAt, _ = parseTime(bridged)
	}
	return id, t, nil
}

// PutDestination adds a destination or replaces the one of the same name.
// Its device, when named, must exist.
func (s *Store) PutDestination(ctx context.Context, t registry.Destination) error {
	if t.Source == "" {
		t.Source = registry.SourceAdded
	}
	if err := t.Validate(); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	if err := t.CheckLinkLocal(s.linkLocal.Load()); err != nil {
		return fmt.Errorf("destination: %w", err)
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.sealingKeyCurrent(ctx, tx); err != nil {
			return fmt.Errorf("destination %s: %w", t.Name, err)
		}
		return s.putDestination(ctx, tx, t)
	})
}

func (s *Store) putDestination(ctx context.Context, tx *sql.Tx, t registry.Destination) error {
	pw, err := s.sealSecret(t.Password.Reveal(), "destination.password")
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
	now := formatTime(s.now())
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
func (s *Store) SetBridged(ctx context.Context, name string, on bool) (changed bool, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
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
			at = formatTime(s.now())
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
func (s *Store) Destination(ctx context.Context, name string) (registry.Destination, error) {
	_, t, err := s.scanDestination(s.db.QueryRowContext(ctx, "SELECT "+destCols+destFrom+" WHERE t.name = ?", name))
	if errors.Is(err, sql.ErrNoRows) {
		return t, fmt.Errorf("destination %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return t, fmt.Errorf("read destination %q: %w", name, err)
	}
	return t, nil
}

// Destinations returns every destination of device ("" for all), by name.
func (s *Store) Destinations(ctx context.Context, device string) ([]registry.Destination, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+destCols+destFrom+" WHERE (? = '' OR d.name = ?) ORDER BY t.name", device, device)
	if err != nil {
		return nil, fmt.Errorf("list destinations: %w", err)
	}
	defer rows.Close()
	var out []registry.Destination
	for rows.Next() {
		_, t, err := s.scanDestination(rows)
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
func (s *Store) Targets(ctx context.Context, device string) ([]registry.Resolved, error) {
	ds, err := s.Destinations(ctx, device)
	if err != nil {
		return nil, err
	}
	devs, err := s.Devices(ctx)
	if err != nil {
		return nil, err
	}
	return registry.Resolve(ds, devs), nil
}

// Target is the named destination resolved as Targets resolves each
// (ErrNotFound when none).
func (s *Store) Target(ctx context.Context, name string) (registry.Resolved, error) {
	d, err := s.Destination(ctx, name)
	if err != nil {
		return registry.Resolved{}, err
	}
	var devs []registry.Device
	if d.Device != "" {
		dev, err := s.Device(ctx, d.Device)
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
func (s *Store) Deliveries() receiver.Destinations { return deliveries{s} }

type deliveries struct{ s *Store }

func (d deliveries) Destinations(ctx context.Context) ([]receiver.Destination, error) {
	rs, err := d.s.Targets(ctx, "")
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
func (s *Store) RemoveDestination(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM destinations WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("remove destination %q: %w", name, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("destination %q: %w", name, ErrNotFound)
		}
		// Out of its incident group: a group it alone held closes, untold.
		_, err = regroup(ctx, tx, s.now(), func(gs []incident.Group) ([]incident.Group, []incident.GroupNotice) {
			return incident.Regroup(gs, name, nil, s.now())
		})
		return err
	})
}

// --- reports ---

// AddReport keeps rep as the destination's latest report, dropping the
// oldest beyond ReportHistory.
func (s *Store) AddReport(ctx context.Context, destination string, rep smbcheck.Report) error {
	b, err := json.Marshal(rep)
	if err != nil {
		return fmt.Errorf("add report: %w", err)
	}
	at := rep.Started
	if at.IsZero() {
		at = s.now()
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM destinations WHERE name = ?", destination).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("add report: destination %q: %w", destination, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("add report: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO destination_reports (destination_id, at, cause, kyocera_code, summary, report)
			VALUES (?, ?, ?, ?, ?, ?)`, id, formatTime(at), string(rep.Verdict.Cause), rep.Verdict.KyoceraCode,
			rep.Verdict.Summary, string(b)); err != nil {
			return fmt.Errorf("add report: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM destination_reports WHERE destination_id = ? AND id NOT IN
			(SELECT id FROM destination_reports WHERE destination_id = ? ORDER BY at DESC, id DESC LIMIT ?)`,
			id, id, ReportHistory); err != nil {
			return fmt.Errorf("add report: prune: %w", err)
		}
		return addHistory(ctx, tx, destination, at, rep)
	})
}

// Reports returns a destination's reports, newest first, at most limit
// (limit <= 0 or above ReportHistory: all kept). An unknown destination is
// ErrNotFound; one never checked gives none.
func (s *Store) Reports(ctx context.Context, destination string, limit int) ([]registry.Report, error) {
	if limit <= 0 || limit > ReportHistory {
		limit = ReportHistory
	}
	var id int64
	err := s.db.QueryRowContext(ctx, "SELECT id FROM destinations WHERE name = ?", destination).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("reports: destination %q: %w", destination, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reports of %q: %w", destination, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, t.name, r.at, r.cause, r.kyocera_code, r.summary, r.report
		FROM destination_reports r JOIN destinations t ON t.id = r.destination_id
		WHERE r.destination_id = ? ORDER BY r.at DESC, r.id DESC LIMIT ?`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("reports of %q: %w", destination, err)
	}
	defer rows.Close()
	var out []registry.Report
	for rows.Next() {
		var r registry.Report
		var at, cause, body string
		if err := rows.Scan(&r.ID, &r.Destination, &at, &cause, &r.KyoceraCode, &r.Summary, &body); err != nil {
			return nil, fmt.Errorf("reports of %q: %w", destination, err)
		}
		r.Cause = smbcheck.Cause(cause)
		if r.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("report %d: at: %w", r.ID, err)
		}
		r.JSON = []byte(body)
		if err := json.Unmarshal(r.JSON, &r.Report); err != nil {
			return nil, fmt.Errorf("report %d: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LatestReport returns the destination's newest report; ok is false when it
// was never checked.
func (s *Store) LatestReport(ctx context.Context, destination string) (r registry.Report, ok bool, err error) {
	rs, err := s.Reports(ctx, destination, 1)
	if err != nil || len(rs) == 0 {
		return r, false, err
	}
	return rs[0], true, nil
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

// LatestVerdict is a destination's newest stored check without its steps
// (the lists: the web's dashboard and /api/v1/destinations).
type LatestVerdict struct {
	At          time.Time
	Verdict     smbcheck.Verdict
	WorkingForm string // the user-name form that worked, as typed
}

// LatestVerdicts returns every checked destination's newest verdict, by
// lower-cased destination name, in one query (a LatestReport per
// destination decodes each whole report).
func (s *Store) LatestVerdicts(ctx context.Context) (map[string]LatestVerdict, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT d.name, r.at, r.cause, r.kyocera_code, r.summary,
			coalesce(json_extract(r.report, '$.verdict.fix'), ''), coalesce(json_extract(r.report, '$.working_form.typed'), '')
		FROM destinations d JOIN destination_reports r ON r.id =
			(SELECT id FROM destination_reports WHERE destination_id = d.id ORDER BY at DESC, id DESC LIMIT 1)`)
	if err != nil {
		return nil, fmt.Errorf("latest verdicts: %w", err)
	}
	defer rows.Close()
	out := map[string]LatestVerdict{}
	for rows.Next() {
		var name, at, cause string
		var v LatestVerdict
		if err := rows.Scan(&name, &at, &cause, &v.Verdict.KyoceraCode, &v.Verdict.Summary, &v.Verdict.Fix, &v.WorkingForm); err != nil {
			return nil, fmt.Errorf("latest verdicts: %w", err)
		}
		if v.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("latest verdicts: %s: at %q: %w", name, at, err)
		}
		v.Verdict.Cause = smbcheck.Cause(cause)
		out[strings.ToLower(name)] = v
	}
	return out, rows.Err()
}

// authColumn is a destination's auth as stored: "ntlm" for the default.
func authColumn(a smbcheck.Auth) string {
	if a == "" {
		return string(smbcheck.AuthNTLM)
	}
	return string(a)
}
