package ad

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
)

// adBindError is a result 49 as AD and Samba word it.
func adBindError(sub string) error {
	return &ldap.Error{ResultCode: ldap.LDAPResultInvalidCredentials,
		Err: fmt.Errorf("80090308: LdapErr: DSID-0C09041C, comment: AcceptSecurityContext error, data %s, v4563", sub)}
}

func TestBindCause(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want scanwarden.Cause
		sub  string
	}{
		{"525 no such user", adBindError("525"), scanwarden.CauseUnknownUser, "525"},
		{"52e wrong password", adBindError("52e"), scanwarden.CauseBadCredentials, "52e"},
		{"530 logon hours", adBindError("530"), scanwarden.CauseLogonHours, "530"},
		{"531 workstation", adBindError("531"), scanwarden.CauseWorkstationRestricted, "531"},
		{"532 password expired", adBindError("532"), scanwarden.CausePasswordExpired, "532"},
		{"533 disabled", adBindError("533"), scanwarden.CauseAccountDisabled, "533"},
		{"701 account expired", adBindError("701"), scanwarden.CauseAccountExpired, "701"},
		{"773 must change", adBindError("773"), scanwarden.CausePasswordMustChange, "773"},
		{"775 locked", adBindError("775"), scanwarden.CauseAccountLocked, "775"},
		{"upper-case hex", adBindError("52E"), scanwarden.CauseBadCredentials, "52e"},
		{"unknown sub-code is a bad password", adBindError("568"), scanwarden.CauseBadCredentials, "568"},
		{"49 without a sub-code (OpenLDAP style)", &ldap.Error{ResultCode: 49, Err: errors.New("invalid credentials")}, scanwarden.CauseBadCredentials, ""},
		{"wrapped", fmt.Errorf("bind: %w", adBindError("775")), scanwarden.CauseAccountLocked, "775"},
		{"not a bind result", &ldap.Error{ResultCode: ldap.LDAPResultUnwillingToPerform, Err: errors.New("no")}, scanwarden.CauseUnknown, ""},
		{"a word containing data is not a sub-code", &ldap.Error{ResultCode: 49, Err: errors.New("metadata 775x")}, scanwarden.CauseBadCredentials, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, sub := BindCause(tc.err)
			if c != tc.want || sub != tc.sub {
				t.Errorf("BindCause = %s, %q; want %s, %q", c, sub, tc.want, tc.sub)
			}
			if !c.Valid() {
				t.Errorf("cause %q is not in the vocabulary", c)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want scanwarden.Cause
	}{
		{"nil", nil, scanwarden.CauseOK},
		{"deadline", fmt.Errorf("search: %w", context.DeadlineExceeded), scanwarden.CauseTimeout},
		{"dial refused", fmt.Errorf("connect to DC: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}), scanwarden.CauseHostUnreachable},
		{"dns", &net.DNSError{Err: "no such host", Name: "dc9.kyolab.test", IsNotFound: true}, scanwarden.CauseNameUnresolved},
		{"dns timeout", &net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}, scanwarden.CauseTimeout},
		{"bind error", newBindError("dc:636", "svc", adBindError("533")), scanwarden.CauseAccountDisabled},
		{"ldap network", &ldap.Error{ResultCode: ldap.ErrorNetwork, Err: errors.New("closed")}, scanwarden.CauseHostUnreachable},
		{"ldap 49 unwrapped", adBindError("701"), scanwarden.CauseAccountExpired},
		{"tls", fmt.Errorf("TLS: %w", x509.UnknownAuthorityError{}), scanwarden.CauseUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("Classify(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
}

func TestBindErrorText(t *testing.T) {
	be := newBindError("10.77.0.10:636", "svc@kyolab.test", adBindError("775"))
	msg := be.Error()
	for _, want := range []string{"svc@kyolab.test", "10.77.0.10:636", "49", "data 775", "account locked out", "account-locked", "service account itself cannot log on"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	var le *ldap.Error
	if !errors.As(be, &le) || be.Code != 49 || be.SubCode != "775" {
		t.Errorf("BindError does not keep the LDAP error: %+v", be)
	}
	strong := newBindError("dc:389", "svc", &ldap.Error{ResultCode: ldap.LDAPResultStrongAuthRequired, Err: errors.New("BindSimple: Transport encryption required.")})
	if !strings.Contains(strong.Error(), "TLS") {
		t.Errorf("strong auth hint missing: %s", strong)
	}
}

func TestTLSHint(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ca   string
		want string
	}{
		{"unknown CA, file", x509.UnknownAuthorityError{}, "/etc/lab-ca.pem", "not signed by a CA in /etc/lab-ca.pem: give the CA that issued it as the AD CA certificate (ad.ca)"},
		{"unknown CA, system", x509.UnknownAuthorityError{}, "", "not signed by a CA in the system's roots"},
		{"hostname", x509.HostnameError{Certificate: &x509.Certificate{}, Host: "10.77.0.99"}, "", "does not name dc9.kyolab.test"},
		{"expired", x509.CertificateInvalidError{Reason: x509.Expired}, "", "expired"},
		{"not TLS", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "", "ldaps:// is port 636"},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, "", "closed the connection during the TLS handshake"},
		{"other", errors.New("boom"), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := fmt.Errorf("handshake: %w", tc.err)
			got := tlsHint(in, "dc9.kyolab.test", tc.ca)
			h, ok := got.(*hintError)
			switch {
			case tc.want == "" && ok:
				t.Errorf("hint for %v: %v", tc.err, got)
			case tc.want != "" && (!ok || h.Unwrap() != in || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("tlsHint = %q, want %q with the error kept", got, tc.want)
			}
		})
	}
}
