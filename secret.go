// Package scanwarden holds the few domain types every part shares.
package scanwarden

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// Secret is a password, community string or passphrase. It prints, logs and
// marshals as "[redacted]"; only Reveal gives the value, at the one place that
// sends it to a peer.
type Secret struct{ v string }

// NewSecret wraps a value.
func NewSecret(v string) Secret { return Secret{v: v} }

const redacted = "[redacted]"

// Reveal returns the value. Call it only where the secret goes on the wire.
func (s Secret) Reveal() string { return s.v }

// IsZero reports whether no secret was given.
func (s Secret) IsZero() bool { return s.v == "" }

func (s Secret) String() string   { return redacted }
func (s Secret) GoString() string { return redacted }

// Format covers every fmt verb, %#v and %x included.
func (s Secret) Format(f fmt.State, _ rune) { f.Write([]byte(redacted)) }

// MarshalJSON never writes the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText never writes the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue keeps the value out of slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// UnmarshalJSON reads a secret from a JSON string (configuration files).
func (s *Secret) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return errors.New("secret: want a JSON string")
	}
	s.v = v
	return nil
}
