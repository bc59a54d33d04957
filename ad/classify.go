package ad

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
)

// subCode is one of AD's bind failure reasons, the "data NNN" of an LDAP
// result 49 (invalidCredentials) diagnostic message.
type subCode struct {
	code  string
	cause scanwarden.Cause
	what  string
}

// subCodes maps AD's bind sub-codes (Win32 error numbers in hex) to the
// cause vocabulary. The same states give these NT statuses over SMB.
var subCodes = []subCode{
	{"525", scanwarden.CauseUnknownUser, "no such user"},
	{"52e", scanwarden.CauseBadCredentials, "wrong password"},
	{"530", scanwarden.CauseLogonHours, "not permitted to log on at this time"},
	{"531", scanwarden.CauseWorkstationRestricted, "not permitted to log on at this workstation"},
	{"532", scanwarden.CausePasswordExpired, "password expired"},
	{"533", scanwarden.CauseAccountDisabled, "account disabled"},
	{"701", scanwarden.CauseAccountExpired, "account expired"},
	{"773", scanwarden.CausePasswordMustChange, "user must reset password"},
	{"775", scanwarden.CauseAccountLocked, "account locked out"},
}

var dataRE = regexp.MustCompile(`(?i)\bdata ([0-9a-f]{3,8})\b`)

// BindCause turns an LDAP bind result into a cause and AD's sub-code ("52e";
// "" when the message has none). A result 49 without a known sub-code is a
// bad password; any other error is classified by Classify.
func BindCause(err error) (scanwarden.Cause, string) {
	var le *ldap.Error
	if !errors.As(err, &le) || le.ResultCode != ldap.LDAPResultInvalidCredentials {
		return Classify(err), ""
	}
	msg := ""
	if le.Err != nil {
		msg = le.Err.Error()
	}
	m := dataRE.FindStringSubmatch(msg)
	if m == nil {
		return scanwarden.CauseBadCredentials, ""
	}
	code := strings.ToLower(m[1])
	for _, s := range subCodes {
		if s.code == code {
			return s.cause, code
		}
	}
	return scanwarden.CauseBadCredentials, code
}

// subCodeText says what a sub-code means ("" when unknown).
func subCodeText(code string) string {
	for _, s := range subCodes {
		if s.code == code {
			return s.what
		}
	}
	return ""
}

// Classify turns an error of this package into the cause the ad step of a
// check shows: the DC's name does not resolve, nothing answers, it does not
// answer in time, or the service account cannot bind.
func Classify(err error) scanwarden.Cause {
	var (
		be  *BindError
		dns *net.DNSError
		op  *net.OpError
		le  *ldap.Error
	)
	switch {
	case err == nil:
		return scanwarden.CauseOK
	case errors.As(err, &be):
		return be.Cause
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return scanwarden.CauseTimeout
	case errors.As(err, &dns):
		if dns.IsTimeout {
			return scanwarden.CauseTimeout
		}
		return scanwarden.CauseNameUnresolved
	case errors.As(err, &op) && op.Op == "dial":
		return scanwarden.CauseHostUnreachable
	case errors.As(err, &le) && le.ResultCode == ldap.LDAPResultInvalidCredentials:
		c, _ := BindCause(err)
		return c
	case errors.As(err, &le) && (le.ResultCode == ldap.LDAPResultTimeout || le.ResultCode == ldap.LDAPResultTimeLimitExceeded):
		return scanwarden.CauseTimeout
	case errors.As(err, &le) && (le.ResultCode == ldap.ErrorNetwork || le.ResultCode == ldap.LDAPResultServerDown):
		return scanwarden.CauseHostUnreachable
	}
	return scanwarden.CauseUnknown
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// BindError is a failed bind of the service account: the directory could
// not be read. It carries the DC, the LDAP result code and AD's sub-code;
// never the password.
type BindError struct {
	Server  string // host:port of the DC
	User    string // the bind user as configured
	Code    uint16 // LDAP result code, 49 for invalidCredentials
	SubCode string // AD's "data" sub-code, e.g. "52e"; "" when none
	Cause   scanwarden.Cause
	Err     error
}

func (e *BindError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bind as %s to DC %s: LDAP result %d", e.User, e.Server, e.Code)
	if name := ldap.LDAPResultCodeMap[e.Code]; name != "" {
		fmt.Fprintf(&b, " (%s)", name)
	}
	if e.SubCode != "" {
		fmt.Fprintf(&b, ", data %s", e.SubCode)
		if w := subCodeText(e.SubCode); w != "" {
			fmt.Fprintf(&b, ": %s", w)
		}
	}
	fmt.Fprintf(&b, " → %s", e.Cause)
	if hint := e.hint(); hint != "" {
		b.WriteString("; " + hint)
	}
	return b.String()
}

func (e *BindError) Unwrap() error { return e.Err }

func (e *BindError) hint() string {
	switch {
	case e.Code == ldap.LDAPResultStrongAuthRequired || e.Code == ldap.LDAPResultConfidentialityRequired:
		return "the DC refuses simple binds without TLS: use ldaps:// or StartTLS (do not allow plain LDAP)"
	case e.Cause == scanwarden.CauseUnknownUser || e.Cause == scanwarden.CauseBadCredentials:
		return "check the service account's name and the password file"
	case e.Cause == scanwarden.CauseOK || e.Cause == scanwarden.CauseUnknown:
		return ""
	}
	return "the service account itself cannot log on (" + string(e.Cause) + "): fix it in Active Directory, or give another read-only account"
}

func newBindError(server, user string, err error) *BindError {
	be := &BindError{Server: server, User: user, Err: err}
	var le *ldap.Error
	if errors.As(err, &le) {
		be.Code = le.ResultCode
	}
	be.Cause, be.SubCode = BindCause(err)
	return be
}

// hintError adds an operator's hint to an error without hiding it.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + " — " + e.hint }
func (e *hintError) Unwrap() error { return e.err }

// tlsHint explains a failed TLS handshake with the DC.
func tlsHint(err error, host, caFile string) error {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	trusted := "the system's roots"
	if caFile != "" {
		trusted = caFile
	}
	switch {
	case errors.As(err, &unknown):
		return &hintError{err, fmt.Sprintf("the DC's certificate is not signed by a CA in %s: give the CA that issued it as the AD CA certificate (ad.ca)", trusted)}
	case errors.As(err, &hostname):
		return &hintError{err, fmt.Sprintf("the DC's certificate does not name %s: connect by a name or address it lists", host)}
	case errors.As(err, &invalid):
		return &hintError{err, "the DC's certificate is expired, not yet valid or not for server authentication"}
	case errors.As(err, &record):
		return &hintError{err, "the DC does not speak TLS on this port: ldaps:// is port 636, ldap:// (StartTLS) port 389"}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF):
		return &hintError{err, "the DC closed the connection during the TLS handshake: on this port it may not speak TLS (ldaps:// is port 636, ldap:// with StartTLS port 389)"}
	}
	return err
}
