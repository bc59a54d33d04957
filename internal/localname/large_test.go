package localname

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLookupLargeAnswer: an answer larger than an Ethernet frame's 1,500
// bytes — a NetBIOS name with 300 addresses, an LLMNR answer with 150 —
// is a valid answer (a UDP datagram carries up to 64 KiB; loopback sends
// it whole), read whole and parsed. The old lookup read 1,500 bytes of it
// and reported the rest as "runs past the end".
func TestLookupLargeAnswer(t *testing.T) {
	addrs := func(n int, six bool) []netip.Addr {
		out := []netip.Addr{pc}
		for i := 1; i < n; i++ {
			a := netip.AddrFrom4([4]byte{10, 78, byte(i >> 8), byte(i)})
			if six && i%2 == 1 {
				a = netip.AddrFrom16([16]byte{0xfd, 0, 15: byte(i)})
			}
			out = append(out, a)
		}
		return out
	}
	nbAnswer := nbnsAnswer(t, 0, "work", ServerSuffix, 0, addrs(300, false)...)
	llAnswer := llmnrAnswer(0, 0, "work", addrs(150, true)...)
	if len(nbAnswer) <= 1500 || len(llAnswer) <= 1500 {
		t.Fatalf("answers of %d and %d bytes: not over 1,500", len(nbAnswer), len(llAnswer))
	}
	nb := newFake(t, func(_ int, q []byte) [][]byte {
		return [][]byte{nbnsAnswer(t, id(q), "work", ServerSuffix, 0, addrs(300, false)...)}
	})
	ll := newFake(t, func(_ int, q []byte) [][]byte { return [][]byte{llmnrAnswer(id(q), 0, "work", addrs(150, true)...)} })
	r, err := (&Asker{Scope: Scope{Broadcast: []netip.AddrPort{nb.addr()}, LLMNR: []Target{{Addr: ll.addr()}}}, Wait: 5 * time.Second}).Lookup(context.Background(), "work")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Invalid)+len(r.Failed) != 0 || len(r.Answers) != 2 {
		t.Fatalf("answers %v; invalid %v; failed %v", r.Answers, r.Invalid, r.Failed)
	}
	for _, a := range r.Answers {
		n := map[Protocol]int{NetBIOS: 300, LLMNR: 150}[a.Protocol]
		if len(a.Addrs) != maxAddrs || a.Addrs[0] != pc || !strings.Contains(a.Note, "gave "+strconv.Itoa(n)+" addresses") {
			t.Errorf("%s answer: %d addresses, note %q; want the first %d of %d", a.Protocol, len(a.Addrs), a.Note, maxAddrs, n)
		}
	}
}
