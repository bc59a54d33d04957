package daemon

import (
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/scanwarden/scanwarden/config"
)

// webHosts are the names the page answers to (web.Config.Hosts): [web]
// hosts, the listen address, the box's host name (and its first label) and
// every address of its interfaces; loopback and localhost pass anyway.
func webHosts(cfg config.Config) []string {
	hosts := append([]string{}, cfg.Web.Hosts...)
	if h, _, err := net.SplitHostPort(cfg.Listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if n, err := os.Hostname(); err == nil && n != "" {
		hosts = append(hosts, n)
		if short, _, ok := strings.Cut(n, "."); ok {
			hosts = append(hosts, short)
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				hosts = append(hosts, p.Addr().String())
			}
		}
	}
	return hosts
}
