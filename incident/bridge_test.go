package incident

import (
	"testing"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestBridgedGreenClosesClientCause: a green check of a bridged
// destination closes at once an incident of a cause of the device's
// client (the bridge answers it), and nothing else: an incident of
// another cause waits for close_after as before, and a green check of a
// destination that is not bridged does too.
func TestBridgedGreenClosesClientCause(t *testing.T) {
	bridged := check(smbcheck.CauseOK)
	bridged.Bridged = true
	for _, tc := range []struct {
		name  string
		cause smbcheck.Cause
		in    Input
		close bool
	}{
		{"encryption-required, bridged", smbcheck.CauseEncryptionRequired, bridged, true},
		{"dialect-floor, bridged", smbcheck.CauseDialectFloor, bridged, true},
		{"ntlm-blocked, bridged", smbcheck.CauseNTLMBlocked, bridged, true},
		{"encryption-required, not bridged", smbcheck.CauseEncryptionRequired, check(smbcheck.CauseOK), false},
		{"bad-credentials, bridged", smbcheck.CauseBadCredentials, bridged, false},
		{"bridge-failing, bridged", smbcheck.CauseBridgeFailing, bridged, false},
		{"file-type-refused, bridged", smbcheck.CauseFileTypeRefused, bridged, false},
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
	in := check(smbcheck.CauseHostUnreachable)
	in.Bridged = true
	if r := Next(nil, in, t0, closeAfter); r.Change != Opened || r.Incident.Cause != smbcheck.CauseHostUnreachable {
		t.Errorf("bridge's own failure: %v %+v, want opened host-unreachable", r.Change, r.Incident)
	}
}
