package trusted

import (
	"net/netip"
	"testing"
	"time"
)

func TestAddrs(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}) }
	var s Addrs
	if s.Has(addr(0), now) {
		t.Fatal("the zero set trusts an address")
	}
	for i := 0; i < Max; i++ {
		s.Trust(addr(i), now.Add(time.Duration(i)*time.Second))
	}
	// Used again: addr(0) is now the most recent, addr(1) the least.
	s.Trust(addr(0), now.Add(time.Hour))
	s.Trust(addr(Max), now.Add(time.Hour))
	at := now.Add(time.Hour)
	if !s.Has(addr(0), at) || s.Has(addr(1), at) || !s.Has(addr(2), at) || !s.Has(addr(Max), at) {
		t.Errorf("after one over Max: 0 %v, 1 %v (the least recent, forgotten), 2 %v, new %v",
			s.Has(addr(0), at), s.Has(addr(1), at), s.Has(addr(2), at), s.Has(addr(Max), at))
	}
	if got := len(s.until); got != Max {
		t.Errorf("%d remembered, want %d", got, Max)
	}
	if !s.Has(addr(Max), now.Add(time.Hour+For-time.Second)) || s.Has(addr(Max), now.Add(time.Hour+For)) {
		t.Errorf("trusted for other than %v after its last use", For)
	}
}
