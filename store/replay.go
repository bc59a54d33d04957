package store

import (
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden/snmp"
)

// Replay keeps the SNMPv3 replay guard's state across restarts; it
// implements snmp.ReplayStore.
type Replay struct{ s *Store }

// Replay returns the replay guard's saved state.
func (s *Store) Replay() *Replay { return &Replay{s: s} }

var _ snmp.ReplayStore = (*Replay)(nil)

// Bounds on the saved replay state (the guard's own).
const (
	maxReplayEngines = 1024
	maxReplayDigests = 8192
)

// LoadReplay reads the SNMPv3 replay guard's saved state.
func (g *Replay) LoadReplay(ctx context.Context) (snmp.ReplayState, error) {
	var st snmp.ReplayState
	rows, err := g.s.db.QueryContext(ctx, `SELECT engine_id, boots, engine_time, at FROM snmp_replay_engines LIMIT ?`, maxReplayEngines)
	if err != nil {
		return st, fmt.Errorf("replay state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e snmp.ReplayEngine
		var at string
		if err := rows.Scan(&e.EngineID, &e.Boots, &e.Time, &at); err != nil {
			return st, fmt.Errorf("replay state: %w", err)
		}
		if e.At, err = parseTime(at); err != nil {
			return st, fmt.Errorf("replay state: engine %x: %w", e.EngineID, err)
		}
		st.Engines = append(st.Engines, e)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("replay state: %w", err)
	}
	rows, err = g.s.db.QueryContext(ctx, `SELECT engine_id, digest, at FROM snmp_replay_digests ORDER BY at DESC LIMIT ?`, maxReplayDigests)
	if err != nil {
		return st, fmt.Errorf("replay state: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d snmp.ReplaySeen
		var at string
		if err := rows.Scan(&d.EngineID, &d.Digest, &at); err != nil {
			return st, fmt.Errorf("replay state: %w", err)
		}
		if d.At, err = parseTime(at); err != nil {
			return st, fmt.Errorf("replay state: digest of %x: %w", d.EngineID, err)
		}
		st.Seen = append(st.Seen, d)
	}
	return st, rows.Err()
}

// SaveReplay replaces the saved state with st (in one transaction; beyond
// the bounds the rest is left out).
func (g *Replay) SaveReplay(ctx context.Context, st snmp.ReplayState) error {
	tx, err := g.s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save replay state: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM snmp_replay_engines`); err != nil {
		return fmt.Errorf("save replay state: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM snmp_replay_digests`); err != nil {
		return fmt.Errorf("save replay state: %w", err)
	}
	eng, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO snmp_replay_engines (engine_id, boots, engine_time, at) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("save replay state: %w", err)
	}
	defer eng.Close()
	for i, e := range st.Engines {
		if i >= maxReplayEngines {
			break
		}
		if _, err := eng.ExecContext(ctx, e.EngineID, e.Boots, e.Time, formatTime(e.At)); err != nil {
			return fmt.Errorf("save replay state: %w", err)
		}
	}
	dig, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO snmp_replay_digests (engine_id, digest, at) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("save replay state: %w", err)
	}
	defer dig.Close()
	for i, d := range st.Seen {
		if i >= maxReplayDigests {
			break
		}
		if _, err := dig.ExecContext(ctx, d.EngineID, d.Digest, formatTime(d.At)); err != nil {
			return fmt.Errorf("save replay state: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save replay state: %w", err)
	}
	return nil
}
