package samba

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestAllowFor(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	ip := netip.MustParseAddr
	lan := LocalNets{Nets: pfx("192.168.10.7/24", "10.77.0.5/24", "192.168.10.0/24")}
	noNets := LocalNets{Err: errors.New("interface addresses: netlink: permission denied")}
	for _, tc := range []struct {
		name       string
		devices    []DeviceAddrs
		configured []netip.Prefix
		local      LocalNets
		allow      []netip.Prefix
		warning    []string // substrings; none: no warning
		unresolved []string
	}{
		{name: "devices and configured, sorted and deduplicated",
			devices:    []DeviceAddrs{{Name: "b", Addrs: []netip.Addr{ip("10.9.8.7")}}, {Name: "a", Addrs: []netip.Addr{ip("10.1.2.3"), ip("10.9.8.7")}}},
			configured: pfx("10.1.2.9/24"), local: lan,
			allow: pfx("10.1.2.0/24", "10.1.2.3/32", "10.9.8.7/32")},
		{name: "an unresolved device is named, the others admitted",
			devices: []DeviceAddrs{{Name: "gone"}, {Name: "ok", Addrs: []netip.Addr{ip("fd00::1")}}}, local: lan,
			allow: pfx("fd00::1/128"), unresolved: []string{"gone"}},
		{name: "nothing registered: the box's networks, with the warning",
			local: lan, allow: pfx("10.77.0.0/24", "192.168.10.0/24"),
			warning: []string{"no MFP is registered and [receiver] allow is empty", "(10.77.0.0/24 192.168.10.0/24)", "scanwarden device add"}},
		{name: "no registered name resolves: they are named in the warning",
			devices: []DeviceAddrs{{Name: "x"}, {Name: "y"}}, local: lan, allow: pfx("10.77.0.0/24", "192.168.10.0/24"),
			warning: []string{"no registered MFP's address resolves (x, y)"}, unresolved: []string{"x", "y"}},
		{name: "no networks readable: 127.0.0.1 alone, never an empty list",
			local: noNets, allow: pfx("127.0.0.1/32"),
			warning: []string{"could not be read (interface addresses: netlink: permission denied)", "127.0.0.1 only"}},
		{name: "no networks found: 127.0.0.1 alone",
			local: LocalNets{}, allow: pfx("127.0.0.1/32"), warning: []string{"(none found)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AllowFor(tc.devices, tc.configured, tc.local)
			if !slices.Equal(got.Allow, tc.allow) || !slices.Equal(got.Unresolved, tc.unresolved) {
				t.Errorf("allow %v unresolved %v, want %v %v", got.Allow, got.Unresolved, tc.allow, tc.unresolved)
			}
			if (got.Warning == "") != (len(tc.warning) == 0) {
				t.Errorf("warning %q", got.Warning)
			}
			for _, w := range tc.warning {
				if !strings.Contains(got.Warning, w) {
					t.Errorf("warning %q lacks %q", got.Warning, w)
				}
			}
		})
	}
}

func TestLocalAllow(t *testing.T) {
	got := LocalAllow("the registered MFPs could not be read (until they are)", LocalNets{Nets: []netip.Prefix{netip.MustParsePrefix("10.0.0.1/8")}})
	if !slices.Equal(got.Allow, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}) ||
		!strings.HasPrefix(got.Warning, "the registered MFPs could not be read (until they are): the fallback share admits any host on this box's networks (10.0.0.0/8)") {
		t.Fatalf("%+v", got)
	}
}
