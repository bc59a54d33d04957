package daemon

import (
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/scanwarden/scanwarden/internal/connlimit"
)

// Caps on the web listener's connections, counted on the TCP socket before
// TLS or HTTP spend anything: one address (a browser opens about six, an
// event stream holds one) cannot take the slots the admin needs from
// another. Connections that stay idle are cut by the http.Server's
// timeouts (ReadHeaderTimeout 10 s before a request, IdleTimeout between
// requests) and the body timeout (web.Config.BodyTimeout).
const (
	WebMaxConns        = 256
	WebMaxConnsPerAddr = 32
)

// webBusy is what a refused plain-HTTP connection reads (nothing over TLS).
const webBusy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 10\r\n" +
	"Content-Length: 39\r\n\r\ntoo many connections from this address\n"

var webRefusedDesc = prometheus.NewDesc("scanwarden_web_connections_refused_total",
	"Web connections closed at accept: too many at once in all or from one address.", nil, nil)

// webLimit counts and logs (once per 10 s) the web connections refused.
type webLimit struct {
	ln      *connlimit.Listener // the last wrapped
	mu      sync.Mutex
	refused int64
	last    time.Time
	skipped int64
	warn    func(msg string, args ...any)
}

func (w *webLimit) wrap(ln net.Listener, tls bool) *connlimit.Listener {
	reply := webBusy
	if tls {
		reply = ""
	}
	l := connlimit.New(ln, connlimit.Caps(WebMaxConns, WebMaxConnsPerAddr, reply, w.refuse), 0)
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

func (w *webLimit) refuse(peer netip.Addr, open, fromPeer int) {
	w.mu.Lock()
	w.refused++
	now := time.Now()
	if !w.last.IsZero() && now.Sub(w.last) < 10*time.Second {
		w.skipped++
		w.mu.Unlock()
		return
	}
	skipped := w.skipped
	w.last, w.skipped = now, 0
	w.mu.Unlock()
	if w.warn != nil {
		w.warn("web connection refused: too many at once", "peer", peer.String(), "open", open, "from_peer", fromPeer,
			"caps", strconv.Itoa(WebMaxConns)+" in all, "+strconv.Itoa(WebMaxConnsPerAddr)+" per address", "not_logged_since_last", skipped)
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
