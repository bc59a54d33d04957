package samba

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// DeviceAddrs is a registered device's name and the addresses its
// address resolved to (none: it did not resolve).
type DeviceAddrs struct {
	Name  string
	Addrs []netip.Addr
}

// LocalNets is this box's networks as read (LocalNetworks), or why they
// could not be.
type LocalNets struct {
	Nets []netip.Prefix
	Err  error
}

// Allowlist is who may connect to the fallback share, the standing warning
// that goes with it ("" when it names the MFPs), and the devices whose
// address gave none.
type Allowlist struct {
	Allow      []netip.Prefix
	Warning    string
	Unresolved []string
}

// AllowFor is the fallback share's allowlist: the registered devices'
// addresses and configured ([receiver] allow) — as the trap and mail
// listeners admit the watched devices and [snmp] allow. With neither (no
// MFP registered yet, none of their names resolving, nothing configured) it
// is LocalAllow: the admin setting the box up can point an MFP at the share
// and see it work, nothing beyond a router can connect, and the list
// narrows to the MFPs by itself once they are registered. (Refusing
// everyone would look like a broken share; admitting every address would
// let routed networks in.)
func AllowFor(devices []DeviceAddrs, configured []netip.Prefix, local LocalNets) Allowlist {
	var out Allowlist
	seen := map[netip.Prefix]bool{}
	add := func(p netip.Prefix) {
		if p = p.Masked(); !seen[p] {
			seen[p] = true
			out.Allow = append(out.Allow, p)
		}
	}
	for _, d := range devices {
		if len(d.Addrs) == 0 {
			out.Unresolved = append(out.Unresolved, d.Name)
			continue
		}
		for _, ip := range d.Addrs {
			add(netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	for _, p := range configured {
		add(p)
	}
	if len(out.Allow) > 0 {
		sortPrefixes(out.Allow)
		return out
	}
	why := "no MFP is registered"
	if len(out.Unresolved) > 0 {
		why = "no registered MFP's address resolves (" + strings.Join(out.Unresolved, ", ") + ")"
	}
	l := LocalAllow(why+" and [receiver] allow is empty", local)
	l.Unresolved = out.Unresolved
	return l
}

// LocalAllow is the allowlist when no MFP can be named: the box's networks,
// or 127.0.0.1 alone when they cannot be read (never an empty list: that
// writes no hosts allow, which admits any address; smb.conf gets hosts
// allow 127.0.0.1, hosts deny ALL). The warning starts with why and says
// what the share admits.
func LocalAllow(why string, local LocalNets) Allowlist {
	const fix = "register the MFPs (scanwarden device add, or import their address book) or set [receiver] allow"
	var out Allowlist
	seen := map[netip.Prefix]bool{}
	for _, p := range local.Nets {
		if p = p.Masked(); !seen[p] {
			seen[p] = true
			out.Allow = append(out.Allow, p)
		}
	}
	sortPrefixes(out.Allow)
	if len(out.Allow) == 0 {
		cause := "none found"
		if local.Err != nil {
			cause = local.Err.Error()
		}
		out.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		out.Warning = fmt.Sprintf("%s, and this box's networks could not be read (%s): the fallback share admits 127.0.0.1 only (this box), no MFP can store a scan; %s",
			why, cause, fix)
		return out
	}
	nets := make([]string, 0, len(out.Allow))
	for _, p := range out.Allow {
		nets = append(nets, p.String())
	}
	out.Warning = fmt.Sprintf("%s: the fallback share admits any host on this box's networks (%s); %s", why, strings.Join(nets, " "), fix)
	return out
}

// LocalNetworks reads the networks of this box's interfaces (link-local
// IPv6 left out: smbd binds one address).
func LocalNetworks() LocalNets {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return LocalNets{Err: fmt.Errorf("interface addresses: %w", err)}
	}
	var out []netip.Prefix
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.IsLinkLocalUnicast() {
			continue
		}
		bits, _ := n.Mask.Size()
		if ip.Is4() && bits > 32 {
			bits -= 96
		}
		out = append(out, netip.PrefixFrom(ip, bits).Masked())
	}
	return LocalNets{Nets: out}
}

func sortPrefixes(ps []netip.Prefix) {
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
}
