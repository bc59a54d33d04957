package connlimit

import (
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// Caps in all and per address, a freed slot, the session bound (no later
// deadline reaches past it) and Shut/Wait, over real loopback sockets.
func TestListener(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused []netip.Addr
	l := New(tcp, func(p netip.Addr, open, fromPeer int) (string, bool) {
		if open >= 3 || fromPeer >= 2 {
			refused = append(refused, p)
			return "busy\n", false
		}
		return "", true
	}, 300*time.Millisecond)
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func(ip string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: time.Second}
		c, err := d.Dial("tcp", tcp.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// reply is what the server wrote before closing (refused), or "" when it
	// kept the connection.
	reply := func(c net.Conn) string {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		b, _ := io.ReadAll(c)
		return string(b)
	}
	a1, a2 := dial("127.0.0.1"), dial("127.0.0.1")
	if r := reply(dial("127.0.0.1")); r != "busy\n" {
		t.Errorf("third from one address: %q", r)
	}
	b1 := dial("127.0.0.2")
	if r := reply(dial("127.0.0.3")); r != "busy\n" {
		t.Errorf("fourth in all: %q", r)
	}
	if r := reply(a1) + reply(a2) + reply(b1); r != "" {
		t.Errorf("admitted ones read %q", r)
	}
	if len(refused) != 2 || l.Open() != 3 {
		t.Fatalf("refused %v, open %d", refused, l.Open())
	}
	srv := <-accepted
	srv.Close()
	if l.Open() != 2 {
		t.Fatalf("open %d after a close", l.Open())
	}
	dial("127.0.0.3")
	s3 := <-accepted
	// The session bound: a zero deadline set later does not lift it.
	s3.SetReadDeadline(time.Time{})
	t0 := time.Now()
	_, err = s3.Read(make([]byte, 1))
	if took := time.Since(t0); err == nil || took > time.Second {
		t.Errorf("read past the session's end: %v after %v", err, took)
	}
	s3.Close()
	done := make(chan struct{})
	go func() {
		l.Shut()
		for c := range accepted {
			c.Close()
		}
		l.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Shut/Wait did not return")
	}
}

// fakeListener hands out in-memory connections that say they come from
// the given addresses (a fake: the peers' IPv6 addresses, other than ::1,
// cannot be dialled from here).
type fakeListener struct {
	peers chan string
}

type fakeConn struct {
	net.Conn
	remote net.Addr
}

func (c fakeConn) RemoteAddr() net.Addr { return c.remote }

func (f fakeListener) Accept() (net.Conn, error) {
	p, ok := <-f.peers
	if !ok {
		return nil, net.ErrClosed
	}
	a, b := net.Pipe()
	go func() { io.Copy(io.Discard, b) }()
	return fakeConn{a, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(p))}, nil
}
func (f fakeListener) Close() error   { return nil }
func (f fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

// The per-address count of an IPv6 peer is its /64's: another address of
// the same /64 (SLAAC, privacy addresses) is counted with it, another /64
// and IPv4 addresses apart; Admit still sees the peer's own address.
func TestPerAddressIPv6By64(t *testing.T) {
	peers := []struct {
		addr     string
		fromPeer int // what Admit is told
	}{
		{"[2001:db8:1:2::10]:5000", 0},
		{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:5001", 1},
		{"[2001:db8:1:2::10%eth0]:5002", 2},
		{"[2001:db8:1:3::10]:5003", 0},
		{"[::ffff:192.0.2.1]:5004", 0},
		{"192.0.2.1:5005", 1},
		{"192.0.2.2:5006", 0},
	}
	ch := make(chan string, len(peers))
	var seen []netip.Addr
	var told []int
	l := New(fakeListener{ch}, func(p netip.Addr, open, fromPeer int) (string, bool) {
		seen = append(seen, p)
		told = append(told, fromPeer)
		return "", true
	}, 0)
	var conns []net.Conn
	for i, p := range peers {
		ch <- p.addr
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if told[i] != p.fromPeer {
			t.Errorf("%s: Admit told %d from the peer, want %d", p.addr, told[i], p.fromPeer)
		}
		want := netip.MustParseAddrPort(p.addr).Addr().Unmap()
		if seen[i] != want {
			t.Errorf("%s: Admit saw %s", p.addr, seen[i])
		}
	}
	for _, c := range conns {
		c.Close()
	}
	if l.Open() != 0 || len(l.perAddr) != 0 {
		t.Errorf("after closing all: open %d, counts %v", l.Open(), l.perAddr)
	}
	close(ch)
}
