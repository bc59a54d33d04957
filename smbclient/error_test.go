package smbclient

import (
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// LogonFailed: what the forwarder must not retry on its timer (the try
// could count toward a lockout) — a server's or a KDC's refusal of the
// account or password, or the ledger's — and what it may.
func TestErrorLogonFailed(t *testing.T) {
	tests := []struct {
		e    Error
		want bool
	}{
		{Error{Op: "logon", Status: ntstatus.LogonFailure, Cause: scanwarden.CauseBadCredentials}, true},
		{Error{Op: "logon", KDCError: 24, Cause: scanwarden.CauseBadCredentials}, true},  // KDC_ERR_PREAUTH_FAILED
		{Error{Op: "logon", KDCError: 18, Cause: scanwarden.CauseAccountDisabled}, true}, // KDC_ERR_CLIENT_REVOKED
		{Error{Op: "logon", Refusal: &Refusal{Reason: "budget spent"}}, true},
		{Error{Op: "logon", KDCError: 7, Cause: scanwarden.CauseKerberosNeedsName}, false}, // no ticket for the host: no password judged
		{Error{Op: "logon", Cause: scanwarden.CauseKDCUnreachable}, false},
		{Error{Op: "logon", Status: ntstatus.NTLMBlocked, Cause: scanwarden.CauseNTLMBlocked}, false},
		{Error{Op: "connect", Cause: scanwarden.CauseHostUnreachable}, false},
	}
	for _, tc := range tests {
		if got := tc.e.LogonFailed(); got != tc.want {
			t.Errorf("%+v: LogonFailed %v, want %v", tc.e, got, tc.want)
		}
	}
}
