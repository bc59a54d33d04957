package snmp

import (
	"encoding/json"
	"fmt"
	"log/slog"
)

// Secret holds an SNMP community or an SNMPv3 passphrase. It prints,
// formats, logs and marshals as "[redacted]"; only Reveal gives the value,
// and only the code that builds a gosnmp client calls it.
type Secret struct{ v string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{v: s} }

const redacted = "[redacted]"

// Reveal returns the secret value.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == "" }

// String implements fmt.Stringer.
func (s Secret) String() string { return redacted }

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return redacted }

// Format makes every verb (%s, %v, %q, %x, %d …) print "[redacted]".
func (s Secret) Format(f fmt.State, verb rune) { fmt.Fprint(f, redacted) }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON implements json.Marshaler.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(redacted) }

// MarshalText implements encoding.TextMarshaler.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// UnmarshalJSON reads a secret from a JSON string (config files).
func (s *Secret) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("secret: want a JSON string")
	}
	s.v = v
	return nil
}
