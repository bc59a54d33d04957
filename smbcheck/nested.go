package smbcheck

import (
	"context"

	"github.com/scanwarden/scanwarden"
)

// A nested check replays the destination somewhere else the admin could
// store on the MFP — a DFS link's target (dfs.go), the address that
// answered for a host name DNS does not know (name_local.go) — so that the
// fix names something that works. It is part of the outer check: the same
// account and device profile, the outer check's ledger (one failed-logon
// budget for both) and lowest-dialect memory (a target on the outer
// check's server is not asked again), no progress of its own, and no
// nested check of its own (one level: its cost is bounded by the outer
// check's).

// nested checks t as the MFP would; what names it for the evidence of a
// step that would otherwise nest again.
func (c *checker) nested(ctx context.Context, t scanwarden.Target, what string) Report {
	c.settleFloor(true) // its connections are extra ones too
	o := c.o
	o.Progress = nil
	o.Ledger = c.ledger
	o.nested = what
	return Run(ctx, t, o)
}
