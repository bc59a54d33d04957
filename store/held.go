package store

import (
	"context"
	"fmt"
)

// HeldByDestination counts, per destination name, the scans the fallback
// share holds and has not delivered yet (held, failed, delivering): the
// overview's headline.
func (c *Scans) HeldByDestination(ctx context.Context) (map[string]int, error) {
	rows, err := c.s.db.QueryContext(ctx, `SELECT destination, count(*) FROM scans WHERE state IN ('held', 'failed', 'delivering') GROUP BY destination`)
	if err != nil {
		return nil, fmt.Errorf("count held scans: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var d string
		var n int
		if err := rows.Scan(&d, &n); err != nil {
			return nil, fmt.Errorf("count held scans: %w", err)
		}
		out[d] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count held scans: %w", err)
	}
	return out, nil
}
