package config

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Web is [web]: HTTPS for the page, the API and /metrics (Config.WebTLS
// says when). Without cert_file/key_file the daemon makes its own
// self-signed certificate in the data dir (internal/webcert).
type Web struct {
	// TLS left out: HTTPS unless listen is a loopback address (only this
	// box reaches it: a reverse proxy, tests) and no cert_file is given.
	// true: HTTPS on any address; false: plain HTTP on any address.
	TLS      *bool  `toml:"tls"`
	CertFile string `toml:"cert_file"` // the admin's own PEM certificate (chain)
	KeyFile  string `toml:"key_file"`  // and its PEM private key
	// Hosts are more names the page answers to besides the box's own (its
	// host name, its addresses, the listen address, localhost): the full
	// DNS name or an alias the admins type, a reverse proxy's name. A
	// request naming any other host is refused (DNS rebinding).
	Hosts []string `toml:"hosts"`
}

// WebTLS says whether the page is served over HTTPS (plain HTTP to the same
// port then only redirects there): [web] tls when set; else yes with
// [web] cert_file, or when listen is not a loopback address.
func (c Config) WebTLS() bool {
	if c.Web.TLS != nil {
		return *c.Web.TLS
	}
	if c.Web.CertFile != "" {
		return true
	}
	host, ip, _, ok := c.WebListen()
	if !ok {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	return !ip.IsValid() || !ip.Unmap().IsLoopback()
}

// WebListen takes listen (HOST:PORT) apart, the one way the page's address
// is read: the host as written (a name, an address, "" for every address),
// the address when the host is one (else the zero Addr), and the port. ok
// is false when listen is not HOST:PORT (Validate refuses that).
func (c Config) WebListen() (host string, ip netip.Addr, port string, ok bool) {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return "", netip.Addr{}, "", false
	}
	ip, _ = netip.ParseAddr(host)
	return host, ip, port, true
}

// validate checks [web].
func (w Web) validate(bad badValue) {
	if (w.CertFile == "") != (w.KeyFile == "") {
		if w.CertFile == "" {
			bad("web.cert_file", `""`, "needed with web.key_file")
		} else {
			bad("web.key_file", `""`, "needed with web.cert_file")
		}
	}
	for _, h := range w.Hosts {
		if !validWebHost(h) {
			bad("web.hosts", strconv.Quote(h), "a host name or an address, without a port")
		}
	}
	if w.TLS != nil && !*w.TLS && w.CertFile != "" {
		bad("web.cert_file", strconv.Quote(w.CertFile), "given with web.tls = false (leave it out, or set tls = true)")
	}
}

// validWebHost says whether h is a host name (letters, digits, hyphens,
// dots) or an IP address.
func validWebHost(h string) bool {
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
