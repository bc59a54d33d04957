package smbclient

import (
	"fmt"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbconn"
)

// Error is what a dial and the Session's operations return: the operation,
// the path within the destination folder, the cause from the vocabulary
// and the underlying error (errors.Is(err, os.ErrNotExist) and
// os.ErrPermission work through it).
type Error struct {
	Op     string           // "connect", "logon", "tree connect", "folder", "create", "write", "read", "rename", "stat", "remove", "list", "close"
	Path   string           // relative to the destination folder; "" for the folder itself
	Cause  scanwarden.Cause // CauseUnknown when nothing more is known
	Status ntstatus.Status  // the NT status, when the server sent one
	// Refusal is set when the ledger kept the logon back: nothing was sent.
	Refusal *Refusal
	// KDCError is the KDC's KRB-ERROR code when it refused a Kerberos
	// logon (errorcode.KDC_ERR_PREAUTH_FAILED: the password is wrong).
	KDCError int32
	Err      error
}

// LogonFailed reports whether the logon was refused for the account or
// its password — by the server (a logon failure), by the KDC (a KRB-ERROR
// about the client or a clock skew) — or kept back by the ledger: trying
// again could count toward the account's lockout.
func (e *Error) LogonFailed() bool {
	if e.Refusal != nil {
		return true
	}
	if e.Op != "logon" {
		return false
	}
	return e.Status.IsLogonFailure() || e.KDCError != 0 && e.Cause != scanwarden.CauseKerberosNeedsName
}

func (e *Error) Error() string {
	s := e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	return fmt.Sprintf("%s: %v (%s)", s, e.Err, e.Cause)
}

func (e *Error) Unwrap() error { return e.Err }

// opError wraps err (nil stays nil).
func opError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return newError(op, path, err)
}

// newError is err met at op on path, classified (see Classify); an *Error
// is returned as it is.
func newError(op, path string, err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	cause, _ := Classify(op, err)
	st, _ := smbconn.StatusOf(err)
	return &Error{Op: op, Path: path, Cause: cause, Status: st, Err: err}
}
