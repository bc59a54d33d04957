package localname

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// The well-known ports and the LLMNR groups (RFC 1002 §10.1; RFC 4795 §2).
const (
	NBNSPort  = 137
	LLMNRPort = 5355
)

var (
	llmnrGroup4 = netip.MustParseAddr("224.0.0.252")
	llmnrGroup6 = netip.MustParseAddr("ff02::1:3")
)

// Target is where one LLMNR query goes: the link-scope group on an
// interface, or one responder by unicast (RFC 4795 §2.4 allows both).
type Target struct {
	Addr netip.AddrPort
	// Interface is the interface a multicast query leaves by ("" for unicast).
	Interface string
}

func (t Target) String() string {
	if t.Interface != "" {
		return t.Addr.String() + " on " + t.Interface
	}
	return t.Addr.String()
}

// Scope is where a lookup's questions go. Nothing else is ever sent to:
// a test gives loopback addresses, or addresses inside the network
// namespaces it made; the box asks the networks of its own interfaces.
type Scope struct {
	// Broadcast are the IPv4 broadcast addresses NetBIOS name queries are
	// broadcast to (B set), with their port (137).
	Broadcast []netip.AddrPort
	// WINS are NetBIOS name servers, asked by unicast.
	WINS []netip.AddrPort
	// LLMNR are the LLMNR destinations.
	LLMNR []Target
}

// Empty reports whether the scope has nowhere to ask.
func (s Scope) Empty() bool { return len(s.Broadcast)+len(s.WINS)+len(s.LLMNR) == 0 }

// WithWINS returns s with WINS servers added (port 137).
func (s Scope) WithWINS(servers ...netip.Addr) Scope {
	s.WINS = append([]netip.AddrPort(nil), s.WINS...)
	for _, a := range servers {
		s.WINS = append(s.WINS, netip.AddrPortFrom(a.Unmap(), NBNSPort))
	}
	return s
}

// MaxScope bounds each list ScopeOf derives.
const MaxScope = 8

// ParseWINS reads a WINS server's address: an IPv4 address (NetBIOS name
// service has no IPv6).
func ParseWINS(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || !a.Unmap().Is4() || a.Unmap().IsUnspecified() || a.Unmap().IsMulticast() {
		return netip.Addr{}, fmt.Errorf("%q is not a WINS server's IPv4 address (such as 10.0.0.5)", s)
	}
	return a.Unmap(), nil
}

// Iface is what ScopeOf needs to know of a network interface.
type Iface struct {
	Name  string
	Flags net.Flags
	Addrs []netip.Prefix
}

// ScopeOf derives where to ask from a machine's interfaces: on every
// interface that is up and neither loopback nor point-to-point, the
// broadcast address of each IPv4 network (broadcast-capable interfaces,
// prefixes shorter than /31) for NetBIOS, and the LLMNR group — IPv4
// when it has an IPv4 address, IPv6 when it has a link-local IPv6 address
// — on multicast-capable ones. Duplicates are dropped, and each list
// keeps at most MaxScope destinations (a box with dozens of container
// bridges does not send dozens of queries per lookup).
func ScopeOf(ifs []Iface) (s Scope) {
	seen := map[string]bool{}
	add := func(key string) bool {
		if seen[key] {
			return false
		}
		seen[key] = true
		return true
	}
	defer func() {
		s.Broadcast = s.Broadcast[:min(len(s.Broadcast), MaxScope)]
		s.LLMNR = s.LLMNR[:min(len(s.LLMNR), MaxScope)]
	}()
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&(net.FlagLoopback|net.FlagPointToPoint) != 0 {
			continue
		}
		var v4, v6ll bool
		for _, p := range ifi.Addrs {
			a := p.Addr().Unmap()
			switch {
			case a.Is4():
				v4 = true
				if ifi.Flags&net.FlagBroadcast == 0 || p.Bits() >= 31 || p.Bits() < 0 {
					continue
				}
				if bc := broadcastOf(netip.PrefixFrom(a, p.Bits())); add("b" + bc.String()) {
					s.Broadcast = append(s.Broadcast, netip.AddrPortFrom(bc, NBNSPort))
				}
			case a.Is6() && a.IsLinkLocalUnicast():
				v6ll = true
			}
		}
		if ifi.Flags&net.FlagMulticast == 0 {
			continue
		}
		if v4 && add("4"+ifi.Name) {
			s.LLMNR = append(s.LLMNR, Target{Addr: netip.AddrPortFrom(llmnrGroup4, LLMNRPort), Interface: ifi.Name})
		}
		if v6ll && add("6"+ifi.Name) {
			s.LLMNR = append(s.LLMNR, Target{Addr: netip.AddrPortFrom(llmnrGroup6, LLMNRPort), Interface: ifi.Name})
		}
	}
	return s
}

// broadcastOf is p's directed broadcast address (all host bits set).
func broadcastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	for i := p.Bits(); i < 32; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom4(b)
}

// Interfaces reads the interfaces of the network namespace this process
// runs in.
func Interfaces() ([]Iface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	out := make([]Iface, 0, len(ifs))
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			return nil, fmt.Errorf("addresses of %s: %w", ifi.Name, err)
		}
		x := Iface{Name: ifi.Name, Flags: ifi.Flags}
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				x.Addrs = append(x.Addrs, p)
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// String lists the scope's destinations, for evidence.
func (s Scope) String() string {
	var parts []string
	for _, a := range s.Broadcast {
		parts = append(parts, "netbios broadcast "+a.String())
	}
	for _, a := range s.WINS {
		parts = append(parts, "netbios wins "+a.String())
	}
	for _, t := range s.LLMNR {
		parts = append(parts, "llmnr "+t.String())
	}
	return strings.Join(parts, ", ")
}
