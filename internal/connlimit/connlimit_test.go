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
