package snmp

import (
	"errors"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"net"
	"strconv"
	"strings"
	"time"
)

// Version is an SNMP protocol version.
type Version string

// Versions this package speaks.
const (
	V1  Version = "1"
	V2c Version = "2c"
	V3  Version = "3"
)

// Target is one device to ask, with how to ask it.
type Target struct {
	Host      string            `json:"host"`
	Port      uint16            `json:"port"`
	Version   Version           `json:"version"`
	Community scanwarden.Secret `json:"community"` // v1/v2c
	V3        *V3Auth           `json:"v3,omitempty"`
	Timeout   time.Duration     `json:"timeout"` // per request
	Retries   int               `json:"retries"`
}

// V3Auth is an SNMPv3 USM user at authPriv (or authNoPriv when PrivPass is
// empty).
type V3Auth struct {
	User        string            `json:"user"`
	AuthProto   string            `json:"auth_proto"` // SHA (default), SHA224, SHA256, SHA384, SHA512, MD5
	AuthPass    scanwarden.Secret `json:"auth_pass"`
	PrivProto   string            `json:"priv_proto"` // AES (default), AES192, AES256, AES192C, AES256C, DES
	PrivPass    scanwarden.Secret `json:"priv_pass"`
	ContextName string            `json:"context_name,omitempty"`
}

// Defaults for a Target.
const (
	DefaultPort    = 161
	DefaultTimeout = 2 * time.Second
	DefaultRetries = 1
)

// Addr is host:port, the device key used in events and the store.
func (t Target) Addr() string {
	port := t.Port
	if port == 0 {
		port = DefaultPort
	}
	return net.JoinHostPort(t.Host, strconv.Itoa(int(port)))
}

// String describes the target without secrets.
func (t Target) String() string {
	v := t.Version
	if v == "" {
		v = V2c
	}
	s := t.Addr() + " v" + string(v)
	if v == V3 && t.V3 != nil {
		s += " user " + t.V3.User
	}
	return s
}

// withDefaults fills zero fields.
func (t Target) withDefaults() Target {
	if t.Port == 0 {
		t.Port = DefaultPort
	}
	if t.Version == "" {
		t.Version = V2c
	}
	if t.Timeout <= 0 {
		t.Timeout = DefaultTimeout
	}
	if t.Retries < 0 {
		t.Retries = 0
	}
	return t
}

// Validate names the first bad field.
func (t Target) Validate() error {
	if t.Host == "" {
		return errors.New("target: host is empty")
	}
	if strings.ContainsAny(t.Host, " /\\\x00") {
		return fmt.Errorf("target: host %q is not a host name or address", t.Host)
	}
	switch t.Version {
	case "", V1, V2c:
		if t.V3 != nil {
			return fmt.Errorf("target %s: v3 credentials given with version %s", t.Addr(), t.Version)
		}
	case V3:
		if t.V3 == nil || t.V3.User == "" {
			return fmt.Errorf("target %s: version 3 needs a user", t.Addr())
		}
		if t.V3.AuthPass.IsZero() {
			return fmt.Errorf("target %s: version 3 needs an auth passphrase", t.Addr())
		}
		if n := len(t.V3.AuthPass.Reveal()); n < 8 {
			return fmt.Errorf("target %s: v3 auth passphrase is shorter than 8 characters", t.Addr())
		}
		if !t.V3.PrivPass.IsZero() && len(t.V3.PrivPass.Reveal()) < 8 {
			return fmt.Errorf("target %s: v3 priv passphrase is shorter than 8 characters", t.Addr())
		}
		if _, err := authProto(t.V3.AuthProto); err != nil {
			return fmt.Errorf("target %s: %w", t.Addr(), err)
		}
		if _, err := privProto(t.V3.PrivProto); err != nil {
			return fmt.Errorf("target %s: %w", t.Addr(), err)
		}
	default:
		return fmt.Errorf("target %s: version %q is not 1, 2c or 3", t.Addr(), t.Version)
	}
	if t.Timeout < 0 || t.Timeout > time.Minute {
		return fmt.Errorf("target %s: timeout %s out of range (0..1m)", t.Addr(), t.Timeout)
	}
	if t.Retries < 0 || t.Retries > 10 {
		return fmt.Errorf("target %s: retries %d out of range (0..10)", t.Addr(), t.Retries)
	}
	return nil
}

// ParseHostPort splits "HOST[:PORT]" (or "[v6]:PORT"); the port defaults
// to 161.
func ParseHostPort(s string) (string, uint16, error) {
	if s == "" {
		return "", 0, errors.New("empty host")
	}
	host, portStr, err := net.SplitHostPort(s)
	if err != nil {
		// No port (or a bare IPv6 address).
		if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
			return s, DefaultPort, nil
		}
		if strings.Contains(s, ":") {
			return "", 0, fmt.Errorf("host %q: %w", s, err)
		}
		return s, DefaultPort, nil
	}
	if host == "" {
		return "", 0, fmt.Errorf("host %q: empty host", s)
	}
	p, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || p == 0 {
		return "", 0, fmt.Errorf("host %q: port must be 1..65535", s)
	}
	return host, uint16(p), nil
}

// Validate checks a USM user for authNoPriv or authPriv: a user name, an
// auth passphrase (8 characters at least), a priv passphrase of 8 or more
// when given, and known protocols. noAuth is never valid.
func (a *V3Auth) Validate() error {
	switch {
	case a.User == "":
		return errors.New("v3: user is empty")
	case a.AuthPass.IsZero():
		return fmt.Errorf("v3 user %s: an auth passphrase is required (noAuth is not taken)", a.User)
	case len(a.AuthPass.Reveal()) < 8:
		return fmt.Errorf("v3 user %s: auth passphrase is shorter than 8 characters", a.User)
	case !a.PrivPass.IsZero() && len(a.PrivPass.Reveal()) < 8:
		return fmt.Errorf("v3 user %s: priv passphrase is shorter than 8 characters", a.User)
	}
	if _, err := authProto(a.AuthProto); err != nil {
		return fmt.Errorf("v3 user %s: %w", a.User, err)
	}
	if _, err := privProto(a.PrivProto); err != nil {
		return fmt.Errorf("v3 user %s: %w", a.User, err)
	}
	return nil
}
