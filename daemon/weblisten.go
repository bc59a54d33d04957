package daemon

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scanwarden/scanwarden/internal/connlimit"
	"github.com/scanwarden/scanwarden/internal/loglimit"
	"github.com/scanwarden/scanwarden/internal/trusted"
)

// Caps on the web listener's connections, counted on the TCP socket before
// TLS or HTTP spend anything: one address (a browser opens about six, an
// event stream holds one) cannot take the slots the admin needs from
// another. Connections that stay idle are cut by the http.Server's
// timeouts (ReadHeaderTimeout 10 s before a request, IdleTimeout between
// requests) and the body timeout (web.Config.BodyTimeout).
//
// An attacker with many addresses can fill WebMaxConns; WebReserve more
// slots are kept for addresses that made an authenticated request (a live
// session or an API token) within the last 24 h, so the admin who was
// logged in still gets the page during such a flood (at most
// trusted.Max such addresses are remembered, the least recent forgotten).
//
// "One address" is an IPv6 peer's /64 (connlimit): a host's SLAAC or
// privacy addresses count as one. Neighbours on that /64 share its
// WebMaxConnsPerAddr, so a trusted IPv6 address is not held to its /64's
// (only to the caps in all).
const (
	WebMaxConns        = 256
	WebMaxConnsPerAddr = 32
	WebReserve         = 32
)

// webBusy is what a refused plain-HTTP connection reads (nothing over TLS).
const webBusy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 10\r\n" +
	"Content-Length: 39\r\n\r\ntoo many connections from this address\n"

var webRefusedDesc = prometheus.NewDesc("scanwarden_web_connections_refused_total",
	"Web connections closed at accept: too many at once in all or from one address.", nil, nil)

// webLimit counts and logs (once per 10 s) the web connections refused.
type webLimit struct {
	ln      *connlimit.Listener // the last wrapped
	trusted trusted.Addrs
	mu      sync.Mutex
	refused int64
	log     *loglimit.Limiter // nil: refusals are only counted
}

func (w *webLimit) wrap(ln net.Listener, tls bool) *connlimit.Listener {
	reply := webBusy
	if tls {
		reply = ""
	}
	l := connlimit.New(ln, func(peer netip.Addr, open, fromPeer int) (string, bool) {
		if open < WebMaxConns && fromPeer < WebMaxConnsPerAddr {
			return "", true
		}
		if open < WebMaxConns+WebReserve && w.isTrusted(peer) && (fromPeer < WebMaxConnsPerAddr || peer.Is6()) {
			return "", true
		}
		w.refuse(peer, open, fromPeer)
		return reply, false
	}, 0)
	w.mu.Lock()
	w.ln = l
	w.mu.Unlock()
	return l
}

// open is the number of web connections open now.
func (w *webLimit) open() int {
	w.mu.Lock()
	l := w.ln
	w.mu.Unlock()
	if l == nil {
		return 0
	}
	return l.Open()
}

// trust remembers an address that made an authenticated request.
func (w *webLimit) trust(a netip.Addr) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trusted.Trust(a, time.Now())
}

func (w *webLimit) isTrusted(a netip.Addr) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.trusted.Has(a, time.Now())
}

func (w *webLimit) refuse(peer netip.Addr, open, fromPeer int) {
	w.mu.Lock()
	w.refused++
	w.mu.Unlock()
	if w.log != nil {
		w.log.Warn("busy", "web connection refused: too many at once", "peer", peer.String(), "open", open, "from_peer", fromPeer,
			"caps", strconv.Itoa(WebMaxConns)+" in all, "+strconv.Itoa(WebMaxConnsPerAddr)+" per address")
	}
}

func (w *webLimit) Refused() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refused
}

func (w *webLimit) Describe(ch chan<- *prometheus.Desc) { ch <- webRefusedDesc }

func (w *webLimit) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(webRefusedDesc, prometheus.CounterValue, float64(w.Refused()))
}
