package receiver

import (
	"context"
	"log/slog"
)

// What the package's black-box tests (package receiver_test) reach that
// no other package needs.

const (
	AnyAddressWarning = anyAddressWarning
	ProbeFailedEvery  = probeFailedEvery
)

var SafeName = safeName

// DeliverScan does Receiver.DeliverScan without a running receiver (the
// default timings).
func DeliverScan(ctx context.Context, dataDir string, cat Catalogue, dests Destinations, remote Remote, id int64) error {
	return newForwarder(DefaultForward, dataDir, cat, dests, remote, slog.New(slog.DiscardHandler), nil).deliverScan(ctx, id)
}
