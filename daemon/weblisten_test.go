package daemon

import (
	"io"
	"net"
	"net/netip"
	"testing"
)

// v6Listener hands out in-memory connections that say they come from the
// given addresses (a fake: no IPv6 address but ::1 can be dialled here).
type v6Listener struct{ peers chan string }

type v6Conn struct {
	net.Conn
	remote net.Addr
}

func (c v6Conn) RemoteAddr() net.Addr { return c.remote }

func (l v6Listener) Accept() (net.Conn, error) {
	p, ok := <-l.peers
	if !ok {
		return nil, net.ErrClosed
	}
	a, b := net.Pipe()
	go io.Copy(io.Discard, b)
	return v6Conn{a, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(p))}, nil
}
func (l v6Listener) Close() error   { return nil }
func (l v6Listener) Addr() net.Addr { return &net.TCPAddr{} }

// Neighbours on one IPv6 /64 share its WebMaxConnsPerAddr: once a host
// there holds them all, another address of that /64 is refused — unless it
// made an authenticated request (the admin's browser on the same LAN).
func TestWebLimitIPv6Per64(t *testing.T) {
	peers := make(chan string, 2)
	defer close(peers)
	w := &webLimit{}
	ln := w.wrap(v6Listener{peers}, true)
	admitted := func(addr string) bool {
		t.Helper()
		peers <- addr
		// a refused connection is closed and Accept waits for the next:
		// follow it with a known-good one from another network
		peers <- "[2001:db8:ffff::1]:1"
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if c.RemoteAddr().String() != addr {
			c.Close() // the marker: addr was refused
			return false
		}
		m, err := ln.Accept() // the marker
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
		return true
	}
	for i := range WebMaxConnsPerAddr {
		if !admitted(netip.AddrPortFrom(netip.MustParseAddr("2001:db8:1:2::100").Next(), uint16(1000+i)).String()) {
			t.Fatalf("connection %d from one host refused", i)
		}
	}
	if admitted("[2001:db8:1:2:aaaa::7]:2000") {
		t.Error("another address of the full /64 admitted")
	}
	if !admitted("[2001:db8:1:3::7]:2000") {
		t.Error("an address of another /64 refused")
	}
	w.trust(netip.MustParseAddr("2001:db8:1:2:aaaa::8"))
	if !admitted("[2001:db8:1:2:aaaa::8]:2001") {
		t.Error("the admin's trusted address on the full /64 refused")
	}
}
