package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/snmp"
)

// Events keeps what the devices report over SNMP, traps and mail: their
// inventory and their send-failure events (with the sweeps that followed
// them). Its SNMPSink implements snmp.Store.
type Events struct{ s *Store }

// Events returns the store's device events and inventory.
func (s *Store) Events() *Events { return &Events{s: s} }

// SNMPSink persists what package snmp learns: inventory and de-duplicated
// send-failure events, in a table kept within its limits. It implements
// snmp.Store.
type SNMPSink struct {
	s      *Store
	window time.Duration
	limits SNMPLimits

	mu        sync.Mutex
	inserted  int       // rows inserted since the last prune
	lastPrune time.Time // when this sink last pruned
	dropped   map[string]int64
}

var _ snmp.Store = (*SNMPSink)(nil)

// DefaultDedupWindow is how long a repeated event key counts as the same
// occurrence.
const DefaultDedupWindow = 30 * time.Minute

// SNMPLimits bound the event table: rows older than MaxAge (by their last
// sighting) go, then the oldest rows beyond MaxRows or MaxBytes (text,
// detail and keys together). Every removed row is counted by reason in
// snmp_event_drops. Zero means zero: a zero limit removes everything.
type SNMPLimits struct {
	MaxAge   time.Duration
	MaxRows  int64
	MaxBytes int64
}

// DefaultSNMPLimits keep 90 days, at most 100,000 events and 64 MiB.
var DefaultSNMPLimits = SNMPLimits{MaxAge: 90 * 24 * time.Hour, MaxRows: 100_000, MaxBytes: 64 << 20}

// The table is pruned after this many inserts, or on an insert this long
// after the last prune; a flood can overshoot a limit by at most pruneEvery rows.
const (
	pruneEvery    = 500
	pruneInterval = time.Minute
)

// SNMP returns the store's snmp.Store with DefaultSNMPLimits; window <= 0
// means DefaultDedupWindow.
func (es *Events) SNMP(window time.Duration) *SNMPSink {
	return es.SNMPLimited(window, DefaultSNMPLimits)
}

// SNMPLimited is SNMP with the event table's limits given.
func (es *Events) SNMPLimited(window time.Duration, lim SNMPLimits) *SNMPSink {
	if window <= 0 {
		window = DefaultDedupWindow
	}
	return &SNMPSink{s: es.s, window: window, limits: lim, dropped: map[string]int64{}}
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
		return learnDevice(ctx, tx, inv, at)
	})
}

// RecordSeen moves a known device's last_seen to at (it answered a poll);
// a device not identified yet is left to RecordDevice.
func (k *SNMPSink) RecordSeen(ctx context.Context, address string, at time.Time) error {
	if at.IsZero() {
		at = k.s.now()
	}
	if _, err := k.s.db.ExecContext(ctx, `UPDATE snmp_devices SET last_seen = ? WHERE address = ?`,
		formatTime(at), address); err != nil {
		return fmt.Errorf("record device seen %s: %w", address, err)
	}
	return nil
}

// RecordEvent stores ev unless an event with the same key was seen within
// the window; then it only refreshes that row (fresh=false). Check and
// write share one IMMEDIATE transaction, so two processes cannot both
// insert the same occurrence.
func (k *SNMPSink) RecordEvent(ctx context.Context, ev snmp.Event) (bool, error) {
	fresh, err := k.RecordEvents(ctx, []snmp.Event{ev})
	if err != nil {
		return false, err
	}
	return fresh[0], nil
}

// RecordEvents is RecordEvent for many events in one transaction (the trap
// listener's batches); fresh[i] is event i's answer. Nothing is stored when
// an error is returned.
func (k *SNMPSink) RecordEvents(ctx context.Context, evs []snmp.Event) ([]bool, error) {
	fresh := make([]bool, len(evs))
	for _, ev := range evs {
		if ev.Key == "" || ev.Device == "" {
			return nil, errors.New("record event: empty key or device")
		}
	}
	var pruned map[string]int64
	err := k.s.tx(ctx, func(tx *sql.Tx) error {
		st, err := prepareEventStmts(ctx, tx)
		if err != nil {
			return err
		}
		defer st.close()
		inserted := 0
		for i, ev := range evs {
			f, err := k.recordEvent(ctx, st, ev)
			if err != nil {
				return fmt.Errorf("record event %s on %s: %w", ev.Code, ev.Device, err)
			}
			fresh[i] = f
			if f {
				inserted++
			}
		}
		if !k.pruneDue(inserted) {
			return nil
		}
		pruned, err = pruneSNMPEvents(ctx, tx, k.s.now(), k.limits)
		return err
	})
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	if pruned != nil {
		k.inserted, k.lastPrune = 0, k.s.now()
	}
	for r, n := range pruned {
		k.dropped[r] += n
	}
	k.mu.Unlock()
	return fresh, nil
}

// pruneDue counts inserted rows and says whether this write should prune.
func (k *SNMPSink) pruneDue(inserted int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inserted += inserted
	return k.inserted >= pruneEvery || (inserted > 0 && k.s.now().Sub(k.lastPrune) >= pruneInterval)
}

// Dropped returns how many events this sink's pruning removed, by reason
// ("age", "rows", "bytes"); SNMPEventDrops has the totals of every process.
func (k *SNMPSink) Dropped() map[string]int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]int64, len(k.dropped))
	for r, n := range k.dropped {
		out[r] = n
	}
	return out
}

// eventStmts are RecordEvents' statements, prepared once per batch.
type eventStmts struct{ find, touch, insert *sql.Stmt }

func prepareEventStmts(ctx context.Context, tx *sql.Tx) (*eventStmts, error) {
	var st eventStmts
	var err error
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&st.find, `SELECT id, last_seen FROM snmp_events WHERE dedup_key = ? ORDER BY last_seen DESC LIMIT 1`},
		{&st.touch, `UPDATE snmp_events SET last_seen = ?, count = count + 1 WHERE id = ?`},
		{&st.insert, `INSERT INTO snmp_events
			(device, dedup_key, source, code, text, destination, rule, detail, first_seen, last_seen, unverified)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
	} {
		if *p.dst, err = tx.PrepareContext(ctx, p.sql); err != nil {
			st.close()
			return nil, err
		}
	}
	return &st, nil
}

func (st *eventStmts) close() {
	for _, s := range []*sql.Stmt{st.find, st.touch, st.insert} {
		if s != nil {
			s.Close()
		}
	}
}

func (k *SNMPSink) recordEvent(ctx context.Context, st *eventStmts, ev snmp.Event) (bool, error) {
	t := ev.Time
	if t.IsZero() {
		t = k.s.now()
	}
	detail, err := json.Marshal(ev.Detail)
	if err != nil {
		return false, fmt.Errorf("detail: %w", err)
	}
	var id int64
	var last string
	err = st.find.QueryRowContext(ctx, ev.Key).Scan(&id, &last)
	switch {
	case err == nil:
		lt, perr := parseTime(last)
		if perr == nil && t.Sub(lt) < k.window {
			newLast := last
			if t.After(lt) {
				newLast = formatTime(t)
			}
			_, err = st.touch.ExecContext(ctx, newLast, id)
			return false, err
		}
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	at := formatTime(t)
	_, err = st.insert.ExecContext(ctx, ev.Device, ev.Key, string(ev.Source), ev.Code, ev.Text, ev.Destination, ev.Rule, string(detail), at, at, snmpBool(ev.Unverified))
	return err == nil, err
}

// eventBytes is what one row weighs for MaxBytes.
const eventBytes = `(length(device) + length(dedup_key) + length(source) + length(code) + length(text) +
	length(destination) + length(rule) + length(detail) + length(sweep) + 2*length(first_seen) + 64)`

// pruneSNMPEvents applies lim at now and counts what went, by reason. When
// a limit is exceeded the table is cut to nine tenths of it, so that a
// steady flood does not prune on every write.
func pruneSNMPEvents(ctx context.Context, tx *sql.Tx, now time.Time, lim SNMPLimits) (map[string]int64, error) {
	pruned := map[string]int64{}
	res, err := tx.ExecContext(ctx, `DELETE FROM snmp_events WHERE last_seen < ?`, formatTime(now.Add(-lim.MaxAge)))
	if err != nil {
		return nil, fmt.Errorf("prune by age: %w", err)
	}
	pruned["age"], _ = res.RowsAffected()
	var rows, size int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(`+eventBytes+`), 0) FROM snmp_events`).Scan(&rows, &size); err != nil {
		return nil, fmt.Errorf("prune: size: %w", err)
	}
	if rows > lim.MaxRows {
		keep := lim.MaxRows * 9 / 10
		res, err := tx.ExecContext(ctx, `DELETE FROM snmp_events WHERE id IN
			(SELECT id FROM snmp_events ORDER BY id LIMIT ?)`, rows-keep)
		if err != nil {
			return nil, fmt.Errorf("prune by rows: %w", err)
		}
		pruned["rows"], _ = res.RowsAffected()
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(`+eventBytes+`), 0) FROM snmp_events`).Scan(&size); err != nil {
			return nil, fmt.Errorf("prune: size: %w", err)
		}
	}
	if size > lim.MaxBytes {
		// The newest rows whose running total stays within nine tenths of
		// MaxBytes are kept; every older row goes.
		res, err := tx.ExecContext(ctx, `DELETE FROM snmp_events WHERE id <= coalesce((SELECT max(id) FROM
			(SELECT id, sum(`+eventBytes+`) OVER (ORDER BY id DESC) AS total FROM snmp_events) WHERE total > ?), -1)`,
			lim.MaxBytes*9/10)
		if err != nil {
			return nil, fmt.Errorf("prune by bytes: %w", err)
		}
		pruned["bytes"], _ = res.RowsAffected()
	}
	at := formatTime(now)
	for reason, n := range pruned {
		if n == 0 {
			delete(pruned, reason)
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO snmp_event_drops(reason, count, last_at) VALUES (?, ?, ?)
			ON CONFLICT(reason) DO UPDATE SET count = count + excluded.count, last_at = excluded.last_at`, reason, n, at); err != nil {
			return nil, fmt.Errorf("prune: count: %w", err)
		}
	}
	return pruned, nil
}

// SNMPEventDrops returns how many events the table's limits removed, by
// reason, since the store was made (every process together).
func (es *Events) SNMPEventDrops(ctx context.Context) (map[string]int64, error) {
	rows, err := es.s.db.QueryContext(ctx, `SELECT reason, count FROM snmp_event_drops`)
	if err != nil {
		return nil, fmt.Errorf("snmp event drops: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var r string
		var n int64
		if err := rows.Scan(&r, &n); err != nil {
			return nil, fmt.Errorf("snmp event drops: %w", err)
		}
		out[r] = n
	}
	return out, rows.Err()
}

// StoredEvent is an event with its persistence figures.
type StoredEvent struct {
	ID int64
	snmp.Event
	FirstSeen, LastSeen time.Time
	Count               int
	// Sweep is what the checks of the device's destinations found when
	// the event named none (nil: not swept).
	Sweep *incident.Sweep
}

// SetEventSweep keeps what the checks after ev found with ev's newest
// stored row (the one its de-duplication key and device name).
func (es *Events) SetEventSweep(ctx context.Context, ev snmp.Event, sw incident.Sweep) error {
	b, err := json.Marshal(sw)
	if err != nil {
		return fmt.Errorf("event sweep: %w", err)
	}
	res, err := es.s.db.ExecContext(ctx, `UPDATE snmp_events SET sweep = ? WHERE id =
		(SELECT id FROM snmp_events WHERE dedup_key = ? AND device = ? ORDER BY last_seen DESC, id DESC LIMIT 1)`,
		string(b), ev.Key, ev.Device)
	if err != nil {
		return fmt.Errorf("event sweep of %s: %w", ev.Device, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("event sweep of %s: no stored event %s", ev.Device, ev.Key)
	}
	return nil
}

// SNMPEvents returns events first seen at or after since, newest first, for
// one device ("" for all), at most limit (default 100, at most 10,000).
func (es *Events) SNMPEvents(ctx context.Context, device string, since time.Time, limit int) ([]StoredEvent, error) {
	return es.ListSNMPEvents(ctx, SNMPEventFilter{Device: device, Since: since, Limit: limit})
}

// SNMPEventFilter selects events for ListSNMPEvents.
type SNMPEventFilter struct {
	Device string // "" for all
	Since  time.Time
	Limit  int // default 100, at most 10,000
	// Unverified: nil both; true only events whose sender was not proven
	// to be the device; false only the devices' own.
	Unverified *bool
}

// ListSNMPEvents is SNMPEvents with the unverified filter.
func (es *Events) ListSNMPEvents(ctx context.Context, f SNMPEventFilter) ([]StoredEvent, error) {
	device, since, limit := f.Device, f.Since, f.Limit
	if limit <= 0 {
		limit = 100
	}
	if limit > 10_000 {
		limit = 10_000
	}
	// Two spellings, so that each can use its index (device, first_seen)
	// or (first_seen): "? = '' OR device = ?" would scan the table.
	q := `SELECT id, device, dedup_key, source, code, text, destination, rule, detail,
			first_seen, last_seen, count, unverified, sweep FROM snmp_events WHERE `
	var args []any
	if device != "" {
		q += `device = ? AND `
		args = append(args, device)
	}
	if f.Unverified != nil {
		q += `unverified = ? AND `
		args = append(args, snmpBool(*f.Unverified))
	}
	q += `first_seen >= ? ORDER BY first_seen DESC, id DESC LIMIT ?`
	args = append(args, formatTime(since), limit)
	rows, err := es.s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list snmp events: %w", err)
	}
	defer rows.Close()
	var out []StoredEvent
	for rows.Next() {
		var e StoredEvent
		var src, detail, first, last, sweep string
		var unverified int
		if err := rows.Scan(&e.ID, &e.Device, &e.Key, &src, &e.Code, &e.Text, &e.Destination, &e.Rule, &detail,
			&first, &last, &e.Count, &unverified, &sweep); err != nil {
			return nil, fmt.Errorf("list snmp events: %w", err)
		}
		e.Source = snmp.Source(src)
		e.Unverified = unverified != 0
		if err := json.Unmarshal([]byte(detail), &e.Detail); err != nil {
			return nil, fmt.Errorf("snmp event %d: detail: %w", e.ID, err)
		}
		if sweep != "" {
			e.Sweep = new(incident.Sweep)
			if err := json.Unmarshal([]byte(sweep), e.Sweep); err != nil {
				return nil, fmt.Errorf("snmp event %d: sweep: %w", e.ID, err)
			}
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
func (es *Events) SNMPDevices(ctx context.Context) ([]snmp.Inventory, error) {
	rows, err := es.s.db.QueryContext(ctx, `SELECT address, kyocera, sys_object_id, sys_descr, model, serial, firmware,
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
func (es *Events) PruneSNMPEvents(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := es.s.tx(ctx, func(tx *sql.Tx) error {
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
