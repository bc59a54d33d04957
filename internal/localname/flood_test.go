package localname

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newPeer is a fake host on loopback (no real peer floods on demand)
// that hands each datagram it reads to handle, which may send anything
// from its socket c.
func newPeer(t *testing.T, handle func(c *net.UDPConn, q []byte, from *net.UDPAddr)) netip.AddrPort {
	return servePeer(t, handle).LocalAddr().(*net.UDPAddr).AddrPort()
}

// servePeer listens on loopback and hands each datagram it reads to
// handle (a copy: handle may keep it); the socket closes with the test.
func servePeer(t *testing.T, handle func(c *net.UDPConn, q []byte, from *net.UDPAddr)) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			handle(c, append([]byte(nil), buf[:n]...), from)
		}
	}()
	return c
}

var (
	rogueAddr  = netip.MustParseAddr("192.0.2.66") // TEST-NET-1, only written into answers
	winsAnswer = netip.MustParseAddr("192.0.2.61")
)

// floodFor is what a rogue that read the query q sends back: one answer
// of its own (q's id and name) and n replies that answer nothing asked —
// bytes that are no reply, another question's id, another name.
func floodFor(t *testing.T, q []byte, n int) [][]byte {
	out := [][]byte{nbnsAnswer(t, id(q), "work", ServerSuffix, 0, rogueAddr)}
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			out = append(out, []byte{0xFF, byte(i)})
		case 1:
			out = append(out, nbnsAnswer(t, id(q)^0x5A5A, "work", ServerSuffix, 0, rogueAddr))
		case 2:
			out = append(out, nbnsAnswer(t, id(q), "other", ServerSuffix, 0, rogueAddr))
		}
	}
	return out
}

// TestLookupFloodCannotSilenceWINS: a host on the segment sees the
// broadcast query and floods the socket it came from with 300 replies
// that answer nothing asked and one answer of its own; a second one has
// guessed the WINS query's socket and floods it the same way, its answer
// bearing the WINS query's id. The WINS server answers after both floods.
// The floods must not use up what the lookup reads for the WINS answer:
// it is heard, and it is the address named (a PC with a WINS server asks
// it first). The old lookup read 16 replies, all the rogues', and ended
// without it.
func TestLookupFloodCannotSilenceWINS(t *testing.T) {
	var once sync.Once
	flooded := make(chan struct{})
	bc := newPeer(t, func(c *net.UDPConn, q []byte, from *net.UDPAddr) {
		once.Do(func() {
			for _, b := range floodFor(t, q, 300) {
				c.WriteToUDP(b, from)
			}
			close(flooded)
		})
	})
	guesser, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer guesser.Close()
	wins := newPeer(t, func(c *net.UDPConn, q []byte, from *net.UDPAddr) {
		for _, b := range floodFor(t, q, 300) {
			guesser.WriteToUDP(b, from)
		}
		select {
		case <-flooded:
		case <-time.After(5 * time.Second):
		}
		time.Sleep(50 * time.Millisecond)
		c.WriteToUDP(nbnsAnswer(t, id(q), "work", ServerSuffix, 0, winsAnswer), from)
	})
	a := Asker{Scope: Scope{Broadcast: []netip.AddrPort{bc}, WINS: []netip.AddrPort{wins}}, Wait: 3 * time.Second}
	r, err := a.Lookup(context.Background(), "work")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("in %s: answers %v; invalid %d: %v; failed %v", r.Waited.Round(time.Millisecond), r.Answers, len(r.Invalid), r.Invalid, r.Failed)
	addr, ans, ok := r.Addr()
	if !ok || addr != winsAnswer || ans.Via != "wins" || ans.From != wins {
		t.Fatalf("named %v from %+v (found %v); want %s from the WINS server %s", addr, ans, ok, winsAnswer, wins)
	}
	for _, x := range r.Answers {
		if x.Via == "wins" && x.From != wins {
			t.Errorf("a WINS answer from %s, not the WINS server %s", x.From, wins)
		}
	}
	if r.Waited > 2*time.Second {
		t.Errorf("waited %s: the WINS answer ends the lookup after the short grace", r.Waited)
	}
	if len(r.Invalid) > maxListed+4 {
		t.Errorf("%d invalid entries, want at most %d listed and the notes", len(r.Invalid), maxListed)
	}
}

// TestLookupFloodHoldsNoLongerThanWait: a flood that never stops, with a
// junk budget it cannot reach, ends the lookup at its wait, not later,
// and only a bounded part of it is listed.
func TestLookupFloodHoldsNoLongerThanWait(t *testing.T) {
	done := make(chan struct{})
	var sent atomic.Int32
	var once sync.Once
	bc := newPeer(t, func(c *net.UDPConn, _ []byte, from *net.UDPAddr) {
		once.Do(func() {
			go func() {
				for i := 0; i < 200000; i++ { // bounded, and ends with the lookup
					select {
					case <-done:
						return
					default:
					}
					c.WriteToUDP([]byte{0xFF}, from)
					sent.Add(1)
				}
			}()
		})
	})
	a := Asker{Scope: Scope{Broadcast: []netip.AddrPort{bc}}, Wait: 300 * time.Millisecond, MaxJunk: 1 << 30}
	r, _ := a.Lookup(context.Background(), "work")
	close(done)
	t.Logf("%d sent; in %s: invalid %d: %v", sent.Load(), r.Waited.Round(time.Millisecond), len(r.Invalid), r.Invalid)
	if r.Waited > 2*time.Second {
		t.Errorf("a flood held the lookup %s past its 300 ms wait", r.Waited)
	}
	if len(r.Invalid) != maxListed+1 || !strings.Contains(r.Invalid[maxListed], "more replies that answer nothing asked, not listed") {
		t.Errorf("invalid %d: %v", len(r.Invalid), r.Invalid)
	}
}
