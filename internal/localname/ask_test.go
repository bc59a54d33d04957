package localname

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResponder is an in-test NetBIOS/LLMNR responder on loopback (a fake:
// the real peers, Samba's nmbd and llmnrd, are asked in the lab test). It
// answers each query with what reply returns.
type fakeResponder struct {
	conn  *net.UDPConn
	asked atomic.Int32
}

func newFake(t *testing.T, reply func(n int, q []byte) [][]byte) *fakeResponder {
	t.Helper()
	f := &fakeResponder{}
	f.conn = servePeer(t, func(c *net.UDPConn, q []byte, from *net.UDPAddr) {
		for _, r := range reply(int(f.asked.Add(1)), q) {
			c.WriteToUDP(r, from)
		}
	})
	return f
}

func (f *fakeResponder) addr() netip.AddrPort { return f.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

// queries is how many queries reached the responder, counted once every
// datagram sent to it before the call has been read: a marker datagram
// goes after them and is waited for (loopback keeps a socket's queue in
// order), so a query still queued cannot be missed as "not sent".
func (f *fakeResponder) queries(t *testing.T) int32 {
	t.Helper()
	before := f.asked.Load()
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(f.addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, nbnsHeaderLen)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if n := f.asked.Load(); n > before {
			// the marker was read last: everything before it is counted
			f.asked.Add(-1)
			return n - 1
		}
		if time.Now().After(deadline) {
			t.Fatal("the responder never read the marker datagram")
		}
	}
}

func id(q []byte) uint16 { return binary.BigEndian.Uint16(q) }

var pc = netip.MustParseAddr("192.0.2.60") // TEST-NET-1: only ever written into answers, never sent to

func nbnsFor(t *testing.T, name string) func(int, []byte) [][]byte {
	return func(_ int, q []byte) [][]byte {
		return [][]byte{nbnsAnswer(t, id(q), name, ServerSuffix, 0, pc)}
	}
}

func TestLookupAnswers(t *testing.T) {
	nb := newFake(t, nbnsFor(t, "nbpc"))
	ll := newFake(t, func(_ int, q []byte) [][]byte { return [][]byte{llmnrAnswer(id(q), 0, "nbpc", pc)} })
	a := Asker{Scope: Scope{Broadcast: []netip.AddrPort{nb.addr()}, LLMNR: []Target{{Addr: ll.addr()}}}, Wait: 10 * time.Second}
	r, err := a.Lookup(context.Background(), "nbpc")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Answers) != 2 || len(r.Asked) != 2 || r.NotAsked != "" || len(r.Invalid)+len(r.Failed) != 0 {
		t.Fatalf("%+v", r)
	}
	got := map[Protocol]Answer{}
	for _, x := range r.Answers {
		got[x.Protocol] = x
	}
	if x := got[NetBIOS]; x.Via != "broadcast" || x.From != nb.addr() || len(x.Addrs) != 1 || x.Addrs[0] != pc {
		t.Errorf("netbios answer %+v", x)
	}
	if x := got[LLMNR]; x.Via != "unicast" || x.From != ll.addr() || x.Addrs[0] != pc {
		t.Errorf("llmnr answer %+v", x)
	}
	if addr, _, ok := r.Addr(); !ok || addr != pc {
		t.Errorf("Addr %v %v", addr, ok)
	}
	// both answered at once: the lookup ends after the short grace (wait/8), not the 10 s wait
	if r.Waited > 5*time.Second {
		t.Errorf("waited %s after both answered", r.Waited)
	}
}

func TestLookupNobodyAnswers(t *testing.T) {
	nb := newFake(t, func(int, []byte) [][]byte { return nil })
	ll := newFake(t, func(int, []byte) [][]byte { return nil })
	a := Asker{Scope: Scope{Broadcast: []netip.AddrPort{nb.addr()}, LLMNR: []Target{{Addr: ll.addr()}}}, Wait: 300 * time.Millisecond}
	r, err := a.Lookup(context.Background(), "work")
	if err != nil || r.Found() || len(r.Asked) != 2 {
		t.Fatalf("%+v %v", r, err)
	}
	// the bound, and not much more (a loaded machine adds some)
	if r.Waited < 290*time.Millisecond || r.Waited > 2*time.Second {
		t.Errorf("waited %s, want about the 300 ms bound", r.Waited)
	}
	// each query sent twice at most (at 0 and at half the wait)
	if n, m := nb.queries(t), ll.queries(t); n < 1 || n > 2 || m < 1 || m > 2 {
		t.Errorf("queries sent: netbios %d, llmnr %d; want 1 or 2 each", n, m)
	}
}

func TestLookupResendsOnce(t *testing.T) {
	nb := newFake(t, func(n int, q []byte) [][]byte {
		if n == 1 {
			return nil // the first query is lost
		}
		return [][]byte{nbnsAnswer(t, id(q), "work", ServerSuffix, 0, pc)}
	})
	r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{nb.addr()}}, Wait: time.Second}).Lookup(context.Background(), "work")
	if !r.Found() || nb.asked.Load() != 2 {
		t.Fatalf("%+v, asked %d", r, nb.asked.Load())
	}
}

func TestLookupWINSNegative(t *testing.T) {
	wins := newFake(t, func(_ int, q []byte) [][]byte {
		if binary.BigEndian.Uint16(q[2:])&nbnsB != 0 {
			t.Errorf("WINS query with B set: % x", q[:4])
		}
		return [][]byte{nbnsAnswer(t, id(q), "work", ServerSuffix, 3)}
	})
	r, _ := (&Asker{Scope: Scope{WINS: []netip.AddrPort{wins.addr()}}, Wait: 200 * time.Millisecond}).Lookup(context.Background(), "work")
	if r.Found() || len(r.Negative) == 0 || !strings.Contains(r.Negative[0], "netbios wins from "+wins.addr().String()) || !strings.Contains(r.Negative[0], "NAM_ERR") {
		t.Fatalf("%+v", r)
	}
}

// TestLookupBroadcastAndWINSApart: a host that is both on the segment and
// the WINS server answers both queries; each answer says which it answers.
func TestLookupBroadcastAndWINSApart(t *testing.T) {
	f := newFake(t, nbnsFor(t, "work"))
	r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{f.addr()}, WINS: []netip.AddrPort{f.addr()}}, Wait: time.Second}).Lookup(context.Background(), "work")
	vias := map[string]bool{}
	for _, a := range r.Answers {
		vias[a.Via] = true
	}
	if len(r.Answers) != 2 || !vias["broadcast"] || !vias["wins"] {
		t.Fatalf("%+v", r)
	}
}

func TestLookupBadReplies(t *testing.T) {
	nb := newFake(t, func(_ int, q []byte) [][]byte {
		return [][]byte{
			{1, 2, 3}, // garbage
			nbnsAnswer(t, id(q)+1, "work", ServerSuffix, 0, pc), // another question's id
			nbnsAnswer(t, id(q), "other", ServerSuffix, 0, pc),  // another name
			nbnsAnswer(t, id(q), "work", ServerSuffix, 0, pc),   // the answer
		}
	})
	r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{nb.addr()}}, Wait: time.Second}).Lookup(context.Background(), "work")
	if !r.Found() || len(r.Invalid) != 3 {
		t.Fatalf("%+v", r)
	}
	for i, want := range []string{"shorter than the 12-byte header", "answers another question", "answers for OTHER<20>"} {
		if !strings.Contains(r.Invalid[i], want) {
			t.Errorf("invalid %d: %s, want %q", i, r.Invalid[i], want)
		}
	}
}

// TestLookupBoundedReplies: a socket reads at most MaxJunk replies that
// answer nothing asked and MaxPackets answers (here negative ones, which
// any host that saw the broadcast can send with its id); then it is read
// no more, and with no other socket the lookup ends at once.
func TestLookupBoundedReplies(t *testing.T) {
	flood := newFake(t, func(int, []byte) [][]byte {
		out := make([][]byte, 40)
		for i := range out {
			out[i] = []byte{0xFF}
		}
		return out
	})
	r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{flood.addr()}}, Wait: 10 * time.Second, MaxJunk: 5}).Lookup(context.Background(), "work")
	if len(r.Invalid) != 6 || !strings.Contains(r.Invalid[5], "netbios broadcast: stopped reading after 5 replies that answer nothing asked") || r.Waited > 5*time.Second {
		t.Fatalf("%d invalid in %s: %v", len(r.Invalid), r.Waited, r.Invalid)
	}
	no := newFake(t, func(_ int, q []byte) [][]byte {
		out := make([][]byte, 40)
		for i := range out {
			out[i] = nbnsAnswer(t, id(q), "work", ServerSuffix, 3)
		}
		return out
	})
	r, _ = (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{no.addr()}}, Wait: 10 * time.Second, MaxPackets: 5}).Lookup(context.Background(), "work")
	if len(r.Invalid) != 1 || !strings.Contains(r.Invalid[0], "netbios broadcast: stopped reading after 5 answers") || len(r.Negative) != 1 || r.Waited > 5*time.Second {
		t.Fatalf("in %s: invalid %v, negative %v", r.Waited, r.Invalid, r.Negative)
	}
}

func TestLookupNotAsked(t *testing.T) {
	f := newFake(t, nbnsFor(t, "x"))
	sc := Scope{Broadcast: []netip.AddrPort{f.addr()}}
	for _, name := range []string{"fs1.corp.local", "", "a b"} {
		r, err := (&Asker{Scope: sc}).Lookup(context.Background(), name)
		if err != nil || r.NotAsked == "" || len(r.Asked) != 0 {
			t.Errorf("%q: %+v %v", name, r, err)
		}
	}
	r, _ := (&Asker{}).Lookup(context.Background(), "work")
	if !strings.Contains(r.NotAsked, "no network to ask") {
		t.Errorf("empty scope: %+v", r)
	}
	// too long for NetBIOS: only LLMNR is asked
	ll := newFake(t, func(int, []byte) [][]byte { return nil })
	r, _ = (&Asker{Scope: Scope{Broadcast: sc.Broadcast, LLMNR: []Target{{Addr: ll.addr()}}}, Wait: 100 * time.Millisecond}).Lookup(context.Background(), "a-name-of-twenty-chars")
	if len(r.Asked) != 1 || !strings.HasPrefix(r.Asked[0], "llmnr") || len(r.Skipped) != 1 {
		t.Errorf("long name: %+v", r)
	}
	if n := f.queries(t); n != 0 {
		t.Errorf("%d queries sent for names that must not be asked", n)
	}
}

func TestLocalAsksNothingUnderTest(t *testing.T) {
	r, err := Local{}.Lookup(context.Background(), "work")
	if err != nil || r.NotAsked == "" || len(r.Asked) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestParseWINS(t *testing.T) {
	for in, ok := range map[string]bool{"10.0.0.5": true, " 10.0.0.5 ": true, "::ffff:10.0.0.5": true, "fd00::5": false, "wins1": false, "0.0.0.0": false, "224.0.0.1": false, "": false} {
		a, err := ParseWINS(in)
		if (err == nil) != ok || ok && a.String() != "10.0.0.5" {
			t.Errorf("ParseWINS(%q) = %v, %v", in, a, err)
		}
	}
}

func TestScopeOf(t *testing.T) {
	up := net.FlagUp | net.FlagBroadcast | net.FlagMulticast
	ifs := []Iface{
		{Name: "lo", Flags: net.FlagUp | net.FlagLoopback, Addrs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/8")}},
		{Name: "eth0", Flags: up, Addrs: []netip.Prefix{netip.MustParsePrefix("10.77.0.2/24"), netip.MustParsePrefix("10.78.1.9/22"), netip.MustParsePrefix("fe80::1/64")}},
		{Name: "eth1", Flags: up, Addrs: []netip.Prefix{netip.MustParsePrefix("10.77.0.3/24")}}, // same subnet: one broadcast
		{Name: "down0", Flags: net.FlagBroadcast, Addrs: []netip.Prefix{netip.MustParsePrefix("172.16.0.1/16")}},
		{Name: "tun0", Flags: net.FlagUp | net.FlagPointToPoint | net.FlagMulticast, Addrs: []netip.Prefix{netip.MustParsePrefix("10.9.0.1/24")}},
		{Name: "p2p", Flags: up, Addrs: []netip.Prefix{netip.MustParsePrefix("10.8.0.1/31"), netip.MustParsePrefix("2001:db8::1/64")}},
	}
	s := ScopeOf(ifs)
	want := "netbios broadcast 10.77.0.255:137, netbios broadcast 10.78.3.255:137, llmnr 224.0.0.252:5355 on eth0, llmnr [ff02::1:3]:5355 on eth0, llmnr 224.0.0.252:5355 on eth1, llmnr 224.0.0.252:5355 on p2p"
	if s.String() != want {
		t.Fatalf("scope\n got %s\nwant %s", s, want)
	}
	var many []Iface
	for i := range 20 {
		many = append(many, Iface{Name: fmt.Sprintf("br%d", i), Flags: up, Addrs: []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 17, byte(i), 1}), 24)}})
	}
	if m := ScopeOf(many); len(m.Broadcast) != MaxScope || len(m.LLMNR) != MaxScope {
		t.Fatalf("20 interfaces: %d broadcasts, %d LLMNR destinations; want %d each", len(m.Broadcast), len(m.LLMNR), MaxScope)
	}
	if w := s.WithWINS(netip.MustParseAddr("10.77.0.60")); len(w.WINS) != 1 || w.WINS[0].String() != "10.77.0.60:137" || len(s.WINS) != 0 {
		t.Fatalf("WithWINS %v", w.WINS)
	}
}

// TestLookupFloodEndsAtOnce: a flood that spends the only socket's
// budget (MaxJunk: junk no longer counts against MaxPackets) ends the
// lookup then, not at Wait — a reader holding a packet nobody will read
// is let go.
func TestLookupFloodEndsAtOnce(t *testing.T) {
	flood := newFake(t, func(int, []byte) [][]byte {
		out := make([][]byte, 200)
		for i := range out {
			out[i] = []byte{0xFF}
		}
		return out
	})
	for i := 0; i < 5; i++ {
		r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{flood.addr()}}, Wait: 10 * time.Second, MaxJunk: 1}).Lookup(context.Background(), "work")
		if r.Waited > 5*time.Second {
			t.Fatalf("lookup %d: %s after reading 1 of a flood: %v", i, r.Waited, r.Invalid)
		}
	}
}

// TestLookupBroadcastCannotClaimWINS: a host on the segment sees the
// broadcast query, not the WINS one; an answer it gives with another id —
// the one the WINS query had when it was the broadcast's plus one, or the
// WINS query's own — is no WINS answer: a logon follows only a WINS
// server's answer (smbcheck's name step), so a Responder must not pass as
// one.
func TestLookupBroadcastCannotClaimWINS(t *testing.T) {
	wins := newFake(t, func(int, []byte) [][]byte { return nil }) // a WINS server that stays silent
	var winsID atomic.Int32
	winsSeen := newFake(t, func(_ int, q []byte) [][]byte { winsID.Store(int32(id(q))); return nil })
	rogue := newFake(t, func(_ int, q []byte) [][]byte {
		out := [][]byte{nbnsAnswer(t, id(q)+1, "work", ServerSuffix, 0, pc)}
		if w := winsID.Load(); w != 0 {
			out = append(out, nbnsAnswer(t, uint16(w), "work", ServerSuffix, 0, pc))
		}
		return out
	})
	for _, sc := range []Scope{
		{Broadcast: []netip.AddrPort{rogue.addr()}, WINS: []netip.AddrPort{wins.addr()}},
		{WINS: []netip.AddrPort{winsSeen.addr()}, Broadcast: []netip.AddrPort{rogue.addr()}},
	} {
		r, _ := (&Asker{Scope: sc, Wait: 300 * time.Millisecond}).Lookup(context.Background(), "work")
		for _, a := range r.Answers {
			if a.Via == "wins" {
				t.Fatalf("answer via wins from %s: %+v", a.From, r)
			}
		}
		if len(r.Invalid) == 0 {
			t.Errorf("the rogue answers are not reported: %+v", r)
		}
	}
}

// TestLookupWaitsForWINS: a broadcast answer comes at once, the WINS
// server's later than the short grace; the lookup waits for the WINS
// server asked and names its answer — a Windows PC with a WINS server
// asks it first, and any host on the segment can answer a broadcast.
func TestLookupWaitsForWINS(t *testing.T) {
	bc := newFake(t, func(_ int, q []byte) [][]byte {
		return [][]byte{nbnsAnswer(t, id(q), "work", ServerSuffix, 0, rogueAddr)}
	})
	wins := newPeer(t, func(c *net.UDPConn, q []byte, from *net.UDPAddr) {
		time.Sleep(300 * time.Millisecond) // the grace is 1 s/8
		c.WriteToUDP(nbnsAnswer(t, id(q), "work", ServerSuffix, 0, winsAnswer), from)
	})
	r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{bc.addr()}, WINS: []netip.AddrPort{wins}}, Wait: time.Second}).Lookup(context.Background(), "work")
	if addr, a, ok := r.Addr(); !ok || addr != winsAnswer || a.Via != "wins" || len(r.Answers) != 2 {
		t.Fatalf("named %v from %+v; answers %v in %s", addr, a, r.Answers, r.Waited)
	}
}

// TestLookupWINSUnreachable: nothing listens at the WINS server's port;
// its connected socket hears the port unreachable, says so, and the
// lookup waits for it no longer.
func TestLookupWINSUnreachable(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	closed := c.LocalAddr().(*net.UDPAddr).AddrPort()
	c.Close()
	r, _ := (&Asker{Scope: Scope{WINS: []netip.AddrPort{closed}}, Wait: 5 * time.Second}).Lookup(context.Background(), "work")
	t.Logf("in %s: failed %v", r.Waited, r.Failed)
	if r.Found() || len(r.Failed) != 1 || !strings.Contains(r.Failed[0], "netbios wins "+closed.String()) || !strings.Contains(r.Failed[0], "port unreachable, nothing listens there") || r.Waited > 2*time.Second {
		t.Fatalf("in %s: failed %v, invalid %v", r.Waited, r.Failed, r.Invalid)
	}
}

// TestLookupWINSQueryLostAskedAgain: the WINS server's first query is lost
// (it ignores it) while the broadcast answers at once: the query is sent
// again at half the wait, and WINS's answer is named, not the broadcast's.
func TestLookupWINSQueryLostAskedAgain(t *testing.T) {
	bc := newFake(t, func(_ int, q []byte) [][]byte {
		return [][]byte{nbnsAnswer(t, id(q), "work", ServerSuffix, 0, rogueAddr)}
	})
	var seen atomic.Int32
	wins := newPeer(t, func(c *net.UDPConn, q []byte, from *net.UDPAddr) {
		if seen.Add(1) == 1 {
			return // lost
		}
		c.WriteToUDP(nbnsAnswer(t, id(q), "work", ServerSuffix, 0, winsAnswer), from)
	})
	r, _ := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{bc.addr()}, WINS: []netip.AddrPort{wins}}, Wait: time.Second}).Lookup(context.Background(), "work")
	if addr, a, ok := r.Addr(); !ok || addr != winsAnswer || a.Via != "wins" {
		t.Fatalf("named %v from %+v after %d WINS queries; answers %v in %s", addr, a, seen.Load(), r.Answers, r.Waited)
	}
}
