package ntstatus

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	seen := map[string]Status{}
	for s, n := range names {
		if !strings.HasPrefix(n, "STATUS_") {
			t.Errorf("0x%08X: name %q", uint32(s), n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%s names both 0x%08X and 0x%08X", n, uint32(s), uint32(other))
		}
		seen[n] = s
	}
	for _, tc := range []struct {
		s    Status
		want string
	}{
		{LogonFailure, "0xC000006D STATUS_LOGON_FAILURE"},
		{Pending, "0x00000103 STATUS_PENDING"},
		{MoreProcessingRequired, "0xC0000016 STATUS_MORE_PROCESSING_REQUIRED"},
		{Status(0xC0DE0001), "0xC0DE0001 NTSTATUS_0xC0DE0001"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		s      Status
		target error
		want   bool
	}{
		{ObjectNameNotFound, os.ErrNotExist, true},
		{ObjectPathNotFound, os.ErrNotExist, true},
		{AccessDenied, os.ErrPermission, true},
		{ObjectNameCollision, os.ErrExist, true},
		{LogonFailure, os.ErrPermission, false},
	} {
		err := fmt.Errorf("open x: %w", tc.s)
		if got := errors.Is(err, tc.target); got != tc.want {
			t.Errorf("errors.Is(%v, %v) = %v", tc.s, tc.target, got)
		}
	}
	for _, s := range []Status{LogonFailure, NoSuchUser, WrongPassword, NotFound} {
		if !s.IsLogonFailure() {
			t.Errorf("%v is a logon failure", s)
		}
	}
	if AccountLockedOut.IsLogonFailure() {
		t.Error("a locked account is not a plain logon failure")
	}
}
