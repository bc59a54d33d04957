package warning

import (
	"context"
	"time"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// Store keeps what warnings are judged from and the warnings themselves
// (store.Warnings): it reads the history, calls judge and stores the outcome
// in one transaction.
type Store interface {
	UpdateWarnings(ctx context.Context, destination, device string, o Observation, notified bool, judge func(h History) []Warning) (Update, error)
}

// Tracker judges each check's report against the thresholds and what the
// store remembers: `check` and the daemon's scheduler both go through it.
type Tracker struct {
	Thresholds Thresholds
	Store      Store
	Now        func() time.Time // nil: time.Now
	Location   *time.Location   // dates in messages; nil: time.Local
	// Notifies: the caller tells the admin of Update.Raised and Cleared
	// (the daemon); without it (`check`) they stay to be told by the daemon.
	Notifies bool
}

// Observe judges rep, a check of destination ("" when not registered) on
// device, and stores the outcome. An interrupted check is not a finding:
// nothing is judged or kept.
func (t *Tracker) Observe(ctx context.Context, destination, device string, rep smbcheck.Report) (Update, error) {
	if rep.Interrupted {
		return Update{}, nil
	}
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	o := Observe(rep)
	o.Device = device
	return t.Store.UpdateWarnings(ctx, destination, device, o, t.Notifies, func(h History) []Warning {
		return Assess(t.Thresholds, o, h, now(), t.Location)
	})
}
