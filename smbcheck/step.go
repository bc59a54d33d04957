package smbcheck

import "context"

// A step is one layer of the diagnosis over the check's connection: run
// records the step's own report entries (ids) — evidence, status, cause —
// and reports whether the check goes on. A step that fails has every step
// after it (and its own ids it did not reach) recorded as skipped.
type step interface {
	ids() []string
	run(ctx context.Context) bool
}
