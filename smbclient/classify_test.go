package smbclient

import (
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
)

// TestNTTable: every row's causes are in the vocabulary, and the
// per-operation overrides say what the operation means.
func TestNTTable(t *testing.T) {
	for st, info := range ntTable {
		if info.cause != "" && !info.cause.Valid() {
			t.Errorf("%s: cause %q not in the vocabulary", st, info.cause)
		}
		for op, c := range info.at {
			if !c.Valid() {
				t.Errorf("%s at %s: cause %q not in the vocabulary", st, op, c)
			}
		}
	}
	tests := []struct {
		op   string
		st   ntstatus.Status
		want scanwarden.Cause
	}{
		{opTree, ntstatus.AccessDenied, scanwarden.CauseShareAccessDenied},
		{opLogon, ntstatus.AccessDenied, scanwarden.CauseBadCredentials},
		{"write", ntstatus.AccessDenied, scanwarden.CauseNoWritePermission},
		{opRemove, ntstatus.AccessDenied, scanwarden.CauseNoDeletePermission},
		{opRemove, ntstatus.CannotDelete, scanwarden.CauseNoDeletePermission},
		{opTree, ntstatus.InsufficientResources, scanwarden.CauseConnectionLimit},
		{"write", ntstatus.InsufficientResources, scanwarden.CauseServerResources},
		{opLogon, ntstatus.NotFound, scanwarden.CauseBadCredentials},
		{"stat", ntstatus.NotFound, scanwarden.CausePathNotFound},
		{"write", ntstatus.ObjectNameCollision, scanwarden.CauseUnknown},
		{opLogon, ntstatus.AccountLockedOut, scanwarden.CauseAccountLocked},
		{opLogon, ntstatus.NTLMBlocked, scanwarden.CauseNTLMBlocked},
		{opLogon, ntstatus.Status(0xC0FFEE00), scanwarden.CauseUnknown},
	}
	for _, tc := range tests {
		if got := causeForStatus(tc.op, tc.st); got != tc.want {
			t.Errorf("%s at %s: %s, want %s", tc.st, tc.op, got, tc.want)
		}
	}
}
