package smbclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbconn"
	"golang.org/x/sys/unix"
)

// Classify turns any error met at op (an Error's Op: "connect", "logon",
// "tree connect", "remove", …) into a cause and its evidence. It is the
// one place that knows the SMB library's and the OS's error types. The
// operation matters: ACCESS_DENIED at tree connect refuses the share, at
// create it refuses writing, at remove it refuses deleting.
func Classify(op string, err error) (scanwarden.Cause, map[string]any) {
	ev := map[string]any{"error": err.Error()}
	if st, ok := smbconn.StatusOf(err); ok {
		ev["nt_status"] = st.String()
		return causeForStatus(op, st), ev
	}
	if errors.Is(err, smb2.ErrRequestNotAccepted) {
		ev["nt_status"] = ntstatus.RequestNotAccepted.String()
		return scanwarden.CauseConnectionLimit, ev
	}
	if errors.Is(err, os.ErrPermission) {
		ev["nt_status"] = ntstatus.AccessDenied.String() + " (as reported by the SMB library)"
		return causeForStatus(op, ntstatus.AccessDenied), ev
	}
	if errors.Is(err, os.ErrNotExist) {
		ev["nt_status"] = ntstatus.ObjectNameNotFound.String() + " (as reported by the SMB library)"
		return scanwarden.CausePathNotFound, ev
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		ev["dns_not_found"] = dnsErr.IsNotFound
		ev["dns_timeout"] = dnsErr.IsTimeout
		if dnsErr.Server != "" {
			ev["dns_server"] = dnsErr.Server
		}
		return scanwarden.CauseNameUnresolved, ev
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		ev["errno"] = errnoName(errno)
		switch errno {
		case syscall.ECONNREFUSED, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EHOSTDOWN, syscall.EADDRNOTAVAIL:
			return scanwarden.CauseHostUnreachable, ev
		case syscall.ECONNRESET, syscall.EPIPE:
			if op == opConnect {
				return scanwarden.CauseHostUnreachable, ev
			}
			return scanwarden.CauseUnknown, ev
		case syscall.ETIMEDOUT:
			if op == opConnect {
				return scanwarden.CauseHostUnreachable, ev
			}
			return scanwarden.CauseTimeout, ev
		}
	}
	if IsTimeout(err) {
		ev["timeout"] = true
		if op == opConnect {
			return scanwarden.CauseHostUnreachable, ev
		}
		return scanwarden.CauseTimeout, ev
	}
	// A status the library folds into a message is recovered from the wire
	// by smbconn's sniffer; here only the message is kept.
	var inv *smb2.InvalidResponseError
	if errors.As(err, &inv) {
		ev["invalid_response"] = inv.Message
	}
	return scanwarden.CauseUnknown, ev
}

// IsTimeout reports whether err is a deadline or a network timeout.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// causeForStatus reads the NT status table: the row's override for op,
// else its cause, else unknown.
func causeForStatus(op string, st ntstatus.Status) scanwarden.Cause {
	info, ok := ntTable[st]
	if !ok {
		return scanwarden.CauseUnknown
	}
	if c, ok := info.at[op]; ok {
		return c
	}
	if info.cause != "" {
		return info.cause
	}
	return scanwarden.CauseUnknown
}

// errnoName is the errno's symbolic name (ECONNREFUSED), or its number.
func errnoName(e syscall.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return fmt.Sprintf("errno %d (%s)", int(e), e.Error())
}

// DescribeDialError says in words why a connection could not be made.
func DescribeDialError(err error) string {
	switch {
	case IsTimeout(err):
		return "no answer (timeout: host down or a firewall drops the traffic)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused (the host is up, nothing listens)"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	}
	return err.Error()
}
