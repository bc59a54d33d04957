// Package connlimit is a net.Listener that admits connections under caps
// (in all and per peer address) before the server behind it spends anything
// on them, and owns the admitted ones: Shut closes the socket and every
// connection, Wait returns once each was closed. The SMTP listener for
// device mail and the daemon's web server use it.
package connlimit

import (
	"io"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Admit decides on a connection from peer while open connections are
// admitted in all, fromPeer of them from peer (from peer's /64 when it is
// an IPv6 address: one host with SLAAC or privacy addresses, or one
// network, counts as one). ok admits it; otherwise
// reply (may be empty) is written to the connection, best effort within
// 100 ms, and the connection is closed.
type Admit func(peer netip.Addr, open, fromPeer int) (reply string, ok bool)

// Listener admits connections through Admit.
type Listener struct {
	net.Listener
	admit   Admit
	session time.Duration

	mu      sync.Mutex
	closed  bool
	conns   map[*conn]struct{}
	perAddr map[netip.Addr]int // by peerKey
	wg      sync.WaitGroup
}

// New wraps ln. session bounds each admitted connection's whole life (every
// deadline set on it later is clamped to its end); zero: no bound.
func New(ln net.Listener, admit Admit, session time.Duration) *Listener {
	return &Listener{Listener: ln, admit: admit, session: session, conns: map[*conn]struct{}{}, perAddr: map[netip.Addr]int{}}
}

// Accept returns the next admitted connection.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		var peer netip.Addr
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
			peer = ap.Addr().Unmap()
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			return nil, net.ErrClosed
		}
		key := peerKey(peer)
		if reply, ok := l.admit(peer, len(l.conns), l.perAddr[key]); !ok {
			l.mu.Unlock()
			if reply != "" {
				c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				io.WriteString(c, reply)
			}
			c.Close()
			continue
		}
		var end time.Time
		if l.session > 0 {
			end = time.Now().Add(l.session)
		}
		tc := &conn{Conn: c, l: l, key: key, end: end}
		l.conns[tc] = struct{}{}
		l.perAddr[key]++
		l.wg.Add(1)
		l.mu.Unlock()
		if !end.IsZero() {
			c.SetDeadline(end)
		}
		return tc, nil
	}
}

// peerKey is what the per-address count is kept under: an IPv4 address
// itself, an IPv6 address's /64 (its zone dropped).
func peerKey(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return a
	}
	return netip.PrefixFrom(a, 64).Masked().Addr()
}

// Open is the number of admitted connections not yet closed.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Shut closes the socket and every open connection; it may be called more
// than once.
func (l *Listener) Shut() {
	l.mu.Lock()
	l.closed = true
	conns := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	l.Listener.Close()
	for _, c := range conns {
		c.Conn.Close()
	}
}

// Wait returns once every admitted connection was closed.
func (l *Listener) Wait() { l.wg.Wait() }

// conn leaves its listener's set when closed; no deadline set on it reaches
// past its end (when it has one).
type conn struct {
	net.Conn
	l    *Listener
	key  netip.Addr // peerKey of its peer
	end  time.Time
	once sync.Once
}

func (c *conn) clamp(t time.Time) time.Time {
	if c.end.IsZero() {
		return t
	}
	if t.IsZero() || t.After(c.end) {
		return c.end
	}
	return t
}

func (c *conn) SetDeadline(t time.Time) error      { return c.Conn.SetDeadline(c.clamp(t)) }
func (c *conn) SetReadDeadline(t time.Time) error  { return c.Conn.SetReadDeadline(c.clamp(t)) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.clamp(t)) }

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		if c.l.perAddr[c.key]--; c.l.perAddr[c.key] <= 0 {
			delete(c.l.perAddr, c.key)
		}
		c.l.mu.Unlock()
		c.l.wg.Done()
	})
	return err
}
