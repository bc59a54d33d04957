package incident

import (
	"testing"

	"github.com/scanwarden/scanwarden"
)

// TestBridgedGreenClosesClientCause: a green check of a bridged
// destination closes at once an incident of a cause of the device's
// client (the bridge answers it), and nothing else: an incident of
// another cause waits for close_after as before, and a green check of a
// destination that is not bridged does too.
func TestBridgedGreenClosesClientCause(t *testing.T) {
	bridged := check(scanwarden.CauseOK)
	bridged.Bridged = true
	for _, tc := range []struct {
		name  string
		cause scanwarden.Cause
		in    Input
		close bool
	}{
		{"encryption-required, bridged", scanwarden.CauseEncryptionRequired, bridged, true},
		{"dialect-floor, bridged", scanwarden.CauseDialectFloor, bridged, true},
		{"ntlm-blocked, bridged", scanwarden.CauseNTLMBlocked, bridged, true},
		{"encryption-required, not bridged", scanwarden.CauseEncryptionRequired, check(scanwarden.CauseOK), false},
		{"bad-credentials, bridged", scanwarden.CauseBadCredentials, bridged, false},
		{"bridge-failing, bridged", scanwarden.CauseBridgeFailing, bridged, false},
		{"file-type-refused, bridged", scanwarden.CauseFileTypeRefused, bridged, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := t0.Add(10 * 60e9)
			r := Next(open(tc.cause, t0), tc.in, now, closeAfter)
			if got := r.Change == Closed; got != tc.close {
				t.Fatalf("closed = %v (change %v), want %v", got, r.Change, tc.close)
			}
			if tc.close && (r.Incident.State != StateClosed || !r.Incident.ClosedAt.Equal(now)) {
				t.Errorf("incident %+v, want closed at %v", r.Incident, now)
			}
		})
	}
	// a failing check of a bridged destination is the bridge's own
	// failure: it opens one
	in := check(scanwarden.CauseHostUnreachable)
	in.Bridged = true
	if r := Next(nil, in, t0, closeAfter); r.Change != Opened || r.Incident.Cause != scanwarden.CauseHostUnreachable {
		t.Errorf("bridge's own failure: %v %+v, want opened host-unreachable", r.Change, r.Incident)
	}
}
