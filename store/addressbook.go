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

// errDryRun rolls a dry run's transaction back.
var errDryRun = errors.New("dry run")

// ImportAddressBook puts a device's address book into the registry in one
// transaction: contacts seen before (same device, same address-book Id) are
// updated in place and keep their names, new ones are added under unique
// names, and the device's imported destinations whose contact is gone are
// removed. The device is added when missing. With dryRun everything is done
// and rolled back, so the result is exactly what the import would do.
func (s *Store) ImportAddressBook(ctx context.Context, device string, book *registry.AddressBook, dryRun bool) (ImportResult, error) {
	res := ImportResult{DryRun: dryRun}
	if err := registry.ValidName(device); err != nil {
		return res, fmt.Errorf("import: device: %w", err)
	}
	if s.key == nil {
		return res, ErrLocked
	}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id, name FROM devices WHERE name = ?", device).Scan(&id, &device)
		if errors.Is(err, sql.ErrNoRows) {
			if err := s.putDevice(ctx, tx, registry.Device{Name: device}); err != nil {
				return err
			}
			res.DeviceCreated = true
		} else if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT "+destCols+destFrom)
		if err != nil {
			return err
		}
		var existing []registry.Destination
		for rows.Next() {
			_, d, err := s.scanDestination(rows)
			if err != nil {
				rows.Close()
				return err
			}
			existing = append(existing, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		res.ImportPlan = registry.PlanImport(device, existing, book)
		for _, d := range res.Removed {
			if _, err := tx.ExecContext(ctx, "DELETE FROM destinations WHERE name = ?", d.Name); err != nil {
				return fmt.Errorf("remove %s: %w", d.Name, err)
			}
		}
		for i, d := range res.Put {
			if err := d.Validate(); err != nil {
				c := book.Contacts[i]
				return &registry.BookError{Line: c.Line, Contact: fmt.Sprintf("Id=%q", c.ID), Err: err}
			}
			if err := s.putDestination(ctx, tx, d); err != nil {
				return err
			}
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		var be *registry.BookError
		if errors.As(err, &be) {
			return res, err
		}
		return res, fmt.Errorf("import address book into %s: %w", device, err)
	}
	return res, nil
}
