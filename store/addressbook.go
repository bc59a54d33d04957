package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/scanwarden/scanwarden/registry"
)

// ImportResult is what an address-book import did (or, dry, would do).
type ImportResult struct {
	registry.ImportPlan
	DeviceCreated bool // the device did not exist and was added
	DryRun        bool
}

// ErrRegistryChanged is returned when the registry changed between an
// import's plan and its write: nothing was written; import again.
var ErrRegistryChanged = errors.New("the registry changed while the import was planned; nothing was written, import again")

// ImportAddressBook puts a device's address book into the registry:
// contacts seen before (same device, same address-book Id) are updated in
// place and keep their names, new ones are added under unique names, and the
// device's imported destinations whose contact is gone are removed. The
// device is added when missing.
//
// The plan is made from a read-only snapshot of the registry, outside any
// write transaction: a preview (dryRun) is that plan and nothing more, and
// never holds the write lock, so the daemon's other writes (a login, a check)
// go on meanwhile. The write itself is one transaction that first checks the
// registry is still the one planned against (ErrRegistryChanged if not).
func (dst *Destinations) ImportAddressBook(ctx context.Context, device string, book *registry.AddressBook, dryRun bool) (ImportResult, error) {
	res := ImportResult{DryRun: dryRun}
	if err := registry.ValidName(device); err != nil {
		return res, fmt.Errorf("import: device: %w", err)
	}
	if dst.s.key == nil {
		return res, ErrLocked
	}
	var seen registryVersion
	err := dst.s.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		if seen, err = versionOf(ctx, tx); err != nil {
			return err
		}
		err = tx.QueryRowContext(ctx, "SELECT name FROM devices WHERE name = ?", device).Scan(&device)
		if errors.Is(err, sql.ErrNoRows) {
			res.DeviceCreated = true
		} else if err != nil {
			return err
		}
		existing, err := dst.allDestinations(ctx, tx)
		if err != nil {
			return err
		}
		res.ImportPlan = registry.PlanImport(device, existing, book)
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("import address book into %s: read the registry: %w", device, err)
	}
	for i, d := range res.Put {
		err := d.Validate()
		if err == nil {
			err = d.CheckLinkLocal(dst.s.linkLocal.Load())
		}
		if err != nil {
			c := book.Contacts[i]
			return res, &registry.BookError{Line: c.Line, Contact: fmt.Sprintf("Id=%q", c.ID), Err: err}
		}
	}
	if dryRun {
		return res, nil
	}
	err = dst.s.tx(ctx, func(tx *sql.Tx) error {
		now, err := versionOf(ctx, tx)
		if err != nil {
			return err
		}
		if now != seen {
			return ErrRegistryChanged
		}
		if err := sealingKeyCurrent(ctx, tx, dst.s.key); err != nil {
			return err
		}
		if res.DeviceCreated {
			if err := dst.s.Devices().putDevice(ctx, tx, registry.Device{Name: device}); err != nil {
				return err
			}
		}
		for _, d := range res.Removed {
			if _, err := tx.ExecContext(ctx, "DELETE FROM destinations WHERE name = ?", d.Name); err != nil {
				return fmt.Errorf("remove %s: %w", d.Name, err)
			}
		}
		for _, d := range res.Put {
			if err := dst.putDestination(ctx, tx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, fmt.Errorf("import address book into %s: %w", device, err)
	}
	return res, nil
}

// registryVersion tells whether the registry changed between two reads:
// any insert, delete or update of a destination, or a device added or
// removed, changes it (a device's polled state does not).
type registryVersion struct {
	dests, devices  int64
	destIDs, devIDs int64
	destUpdated     string
}

func versionOf(ctx context.Context, tx *sql.Tx) (registryVersion, error) {
	var v registryVersion
	err := tx.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM destinations), (SELECT coalesce(sum(id), 0) FROM destinations),
		(SELECT coalesce(max(updated_at), '') FROM destinations),
		(SELECT count(*) FROM devices), (SELECT coalesce(sum(id), 0) FROM devices)`).Scan(&v.dests, &v.destIDs, &v.destUpdated, &v.devices, &v.devIDs)
	if err != nil {
		return v, fmt.Errorf("read the registry's version: %w", err)
	}
	return v, nil
}

func (dst *Destinations) allDestinations(ctx context.Context, tx *sql.Tx) ([]registry.Destination, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+destCols+destFrom)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []registry.Destination
	for rows.Next() {
		_, d, err := dst.scanDestination(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// readTx runs fn in a read-only transaction: one consistent snapshot, and
// a plain BEGIN (not the store's BEGIN IMMEDIATE), so no write lock is taken.
func (s *Store) readTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}
