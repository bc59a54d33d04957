package snmp

import "context"

// Sink receives what the poller, the trap listener and the mail listener
// learn. Record returns fresh=false for a duplicate (same Key within the
// sink's window). Implementations must be safe for concurrent use.
type Sink interface {
	RecordDevice(ctx context.Context, inv Inventory) error
	RecordEvent(ctx context.Context, ev Event) (fresh bool, err error)
}
