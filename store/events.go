package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
)

// SNMPSink persists what package snmp learns: inventory and de-duplicated
// send-failure events. It implements snmp.Sink.
type SNMPSink struct {
	s      *Store
	window time.Duration
}

var _ snmp.Sink = (*SNMPSink)(nil)

// DefaultDedupWindow is how long a repeated event key counts as the same
// occurrence.
const DefaultDedupWindow = 30 * time.Minute

// SNMP returns the store's snmp.Sink; window <= 0 means DefaultDedupWindow.
func (s *Store) SNMP(window time.Duration) *SNMPSink {
	if window <= 0 {
		window = DefaultDedupWindow
	}
	return &SNMPSink{s: s, window: window}
}

// RecordDevice inserts or updates a device's inventory.
func (k *SNMPSink) RecordDevice(ctx context.Context, inv snmp.Inventory) error {
	if inv.Address == "" {
		return errors.New("record device: empty address")
	}
	seen := inv.SeenAt
	if seen.IsZero() {
		seen = k.s.now()
	}
	at := formatTime(seen)
	return k.s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO snmp_devices
			(address, kyocera, sys_object_id, sys_descr, model, serial, firmware, sys_name, sys_location, mac, first_seen, last_seen)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(address) DO UPDATE SET kyocera=excluded.kyocera, sys_object_id=excluded.sys_object_id,
				sys_descr=excluded.sys_descr, model=excluded.model, serial=excluded.serial, firmware=excluded.firmware,
				sys_name=excluded.sys_name, sys_location=excluded.sys_location, mac=excluded.mac, last_seen=excluded.last_seen`,
			inv.Address, snmpBool(inv.Kyocera), inv.SysObjectID, inv.SysDescr, inv.Model, inv.Serial, inv.Firmware,
			inv.SysName, inv.SysLocation, inv.MAC, at, at)
		if err != nil {
			return fmt.Errorf("record device %s: %w", inv.Address, err)
		}
		return nil
	})
}

// RecordEvent stores ev unless an event with the same key was seen within
// the window; then it only refreshes that row (fresh=false). Check and
// write share one IMMEDIATE transaction, so two processes cannot both
// insert the same occurrence.
func (k *SNMPSink) RecordEvent(ctx context.Context, ev snmp.Event) (bool, error) {
	if ev.Key == "" || ev.Device == "" {
		return false, errors.New("record event: empty key or device")
	}
	t := ev.Time
	if t.IsZero() {
		t = k.s.now()
	}
	detail, err := json.Marshal(ev.Detail)
	if err != nil {
		return false, fmt.Errorf("record event: detail: %w", err)
	}
	fresh := false
	err = k.s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		var last string
		err := tx.QueryRowContext(ctx, `SELECT id, last_seen FROM snmp_events WHERE dedup_key = ?
			ORDER BY last_seen DESC LIMIT 1`, ev.Key).Scan(&id, &last)
		switch {
		case err == nil:
			lt, perr := parseTime(last)
			if perr == nil && t.Sub(lt) < k.window {
				newLast := last
				if t.After(lt) {
					newLast = formatTime(t)
				}
				_, err = tx.ExecContext(ctx, `UPDATE snmp_events SET last_seen = ?, count = count + 1 WHERE id = ?`, newLast, id)
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		at := formatTime(t)
		_, err = tx.ExecContext(ctx, `INSERT INTO snmp_events
			(device, dedup_key, source, code, text, destination, rule, detail, first_seen, last_seen)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			ev.Device, ev.Key, string(ev.Source), ev.Code, ev.Text, ev.Destination, ev.Rule, string(detail), at, at)
		fresh = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record event %s on %s: %w", ev.Code, ev.Device, err)
	}
	return fresh, nil
}

// StoredEvent is an event with its persistence figures.
type StoredEvent struct {
	ID int64
	snmp.Event
	FirstSeen, LastSeen time.Time
	Count               int
}

// SNMPEvents returns events first seen at or after since, newest first, for
// one device ("" for all), at most limit (default 100, at most 10,000).
func (s *Store) SNMPEvents(ctx context.Context, device string, since time.Time, limit int) ([]StoredEvent, error) {
	if limit <= 0 {
		limit = 100
	}
	if limit > 10_000 {
		limit = 10_000
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, device, dedup_key, source, code, text, destination, rule, detail,
			first_seen, last_seen, count FROM snmp_events
		WHERE (? = '' OR device = ?) AND first_seen >= ? ORDER BY first_seen DESC, id DESC LIMIT ?`,
		device, device, formatTime(since), limit)
	if err != nil {
		return nil, fmt.Errorf("list snmp events: %w", err)
	}
	defer rows.Close()
	var out []StoredEvent
	for rows.Next() {
		var e StoredEvent
		var src, detail, first, last string
		if err := rows.Scan(&e.ID, &e.Device, &e.Key, &src, &e.Code, &e.Text, &e.Destination, &e.Rule, &detail,
			&first, &last, &e.Count); err != nil {
			return nil, fmt.Errorf("list snmp events: %w", err)
		}
		e.Source = snmp.Source(src)
		if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
			return nil, fmt.Errorf("snmp event %d: detail: %w", e.ID, err)
		}
		if e.FirstSeen, err = parseTime(first); err != nil {
			return nil, fmt.Errorf("snmp event %d: first_seen: %w", e.ID, err)
		}
		if e.LastSeen, err = parseTime(last); err != nil {
			return nil, fmt.Errorf("snmp event %d: last_seen: %w", e.ID, err)
		}
		e.Time = e.FirstSeen
		out = append(out, e)
	}
	return out, rows.Err()
}

// SNMPDevices returns the inventory, ordered by address.
func (s *Store) SNMPDevices(ctx context.Context) ([]snmp.Inventory, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT address, kyocera, sys_object_id, sys_descr, model, serial, firmware,
		sys_name, sys_location, mac, last_seen FROM snmp_devices ORDER BY address`)
	if err != nil {
		return nil, fmt.Errorf("list snmp devices: %w", err)
	}
	defer rows.Close()
	var out []snmp.Inventory
	for rows.Next() {
		var inv snmp.Inventory
		var kyo int
		var last string
		if err := rows.Scan(&inv.Address, &kyo, &inv.SysObjectID, &inv.SysDescr, &inv.Model, &inv.Serial,
			&inv.Firmware, &inv.SysName, &inv.SysLocation, &inv.MAC, &last); err != nil {
			return nil, fmt.Errorf("list snmp devices: %w", err)
		}
		inv.Kyocera = kyo != 0
		if inv.SeenAt, err = parseTime(last); err != nil {
			return nil, fmt.Errorf("snmp device %s: last_seen: %w", inv.Address, err)
		}
		out = append(out, inv)
	}
	return out, rows.Err()
}

// PruneSNMPEvents deletes events last seen before before; it returns how many.
func (s *Store) PruneSNMPEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM snmp_events WHERE last_seen < ?`, formatTime(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune snmp events: %w", err)
	}
	return n, nil
}

func snmpBool(b bool) int {
	if b {
		return 1
	}
	return 0
}
