package samba

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// ParseListen reads the share's address: IP, or IP:PORT (port 445 when left
// out; an IPv6 address with a port in brackets). The share binds one
// address, so a name or an empty host is refused. Errors give the reason
// alone: the caller names its setting (--listen, receiver.listen).
func ParseListen(s string) (netip.Addr, int, error) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip, 445, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.Addr{}, 0, errors.New("want the IP address the share binds, or IP:PORT")
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, 0, errors.New("not an IP address (the share binds one address)")
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return netip.Addr{}, 0, errors.New("bad port: must be 1..65535")
	}
	return ip, p, nil
}

// ParseAllowEntry reads one entry of the share's allowlist: an address (one
// host) or a network (CIDR, masked), spaces around it ignored; an
// IPv4-mapped one (::ffff:10.0.0.9) is read as the IPv4 one it names. An
// address with a zone is refused: smbd cannot match it. Errors give the
// reason alone: the caller names its setting. It is the one parser of an
// address or a network: [receiver] allow, [snmp] allow and cidr, and the
// CLI's --allow and --cidr read theirs with it.
func ParseAllowEntry(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		return unmapPrefix(netip.PrefixFrom(ip, ip.BitLen())), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("not an address or a network such as 192.168.10.0/24")
	}
	return unmapPrefix(p.Masked()), nil
}
