// Package trusted remembers the addresses the admin used lately (with a
// live session, an API token or the right password): the web's login
// limiter and the daemon's connection caps exempt them from the limits an
// attacker's flood fills, so the admin is not locked out of their own desk.
package trusted

import (
	"net/netip"
	"time"
)

// At most Max addresses are remembered, each For after its last use.
const (
	Max = 64
	For = 24 * time.Hour
)

// Addrs is a set of trusted addresses; its zero value is empty and ready.
// It has no lock of its own: its owner's guards it.
type Addrs struct {
	until map[netip.Addr]time.Time
}

// Trust trusts a for For from now. When a is new and Max are remembered,
// the least recently used is forgotten.
func (s *Addrs) Trust(a netip.Addr, now time.Time) {
	if s.until == nil {
		s.until = map[netip.Addr]time.Time{}
	}
	if _, ok := s.until[a]; !ok && len(s.until) >= Max {
		var oldest netip.Addr
		var at time.Time
		for k, t := range s.until {
			if at.IsZero() || t.Before(at) {
				oldest, at = k, t
			}
		}
		delete(s.until, oldest)
	}
	s.until[a] = now.Add(For)
}

// Has reports whether a is trusted at now.
func (s *Addrs) Has(a netip.Addr, now time.Time) bool { return now.Before(s.until[a]) }
