package smbcheck

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

// classify turns any error a step met into a cause and its evidence. It is
// the one place that knows the SMB library's and the OS's error types. The
// step matters: ACCESS_DENIED at tree connect refuses the share, at create
// it refuses writing, at delete it refuses deleting.
func classify(step string, err error) (scanwarden.Cause, Evidence) {
	ev := Evidence{"error": err.Error()}
	if st, ok := smbconn.StatusOf(err); ok {
		ev["nt_status"] = st.String()
		return causeForStatus(step, st), ev
	}
	if errors.Is(err, smb2.ErrRequestNotAccepted) {
		ev["nt_status"] = ntstatus.RequestNotAccepted.String()
		return scanwarden.CauseConnectionLimit, ev
	}
	if errors.Is(err, os.ErrPermission) {
		ev["nt_status"] = ntstatus.AccessDenied.String() + " (as reported by the SMB library)"
		return causeForStatus(step, ntstatus.AccessDenied), ev
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
			if step == StepTCP {
				return scanwarden.CauseHostUnreachable, ev
			}
			return scanwarden.CauseUnknown, ev
		case syscall.ETIMEDOUT:
			if step == StepTCP {
				return scanwarden.CauseHostUnreachable, ev
			}
			return scanwarden.CauseTimeout, ev
		}
	}
	if isTimeout(err) {
		ev["timeout"] = true
		if step == StepTCP {
			return scanwarden.CauseHostUnreachable, ev
		}
		return scanwarden.CauseTimeout, ev
	}
	// A status the library folds into a message is recovered from the wire
	// by the sniffer in dial.go; here only the message is kept.
	var inv *smb2.InvalidResponseError
	if errors.As(err, &inv) {
		ev["invalid_response"] = inv.Message
	}
	return scanwarden.CauseUnknown, ev
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// causeForStatus reads the NT status table: the row's override for step,
// else its cause, else unknown.
func causeForStatus(step string, st ntstatus.Status) scanwarden.Cause {
	info, ok := ntTable[st]
	if !ok {
		return scanwarden.CauseUnknown
	}
	if c, ok := info.at[step]; ok {
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
