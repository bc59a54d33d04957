package localname

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

// labScope is the scope derived from the interfaces of the lab's client
// namespace — the derivation under test — refused unless every broadcast
// stays inside the lab's segment.
func labScope(t *testing.T, lab *testlab.Lab) (Scope, netip.Addr) {
	t.Helper()
	if lab.PCIP == "" {
		testlab.Missing(t, "the lab has no name-only PC (SWLAB_PC_IP unset): run testlab/lab up again")
	}
	pc := netip.MustParseAddr(lab.PCIP)
	ifs, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	sc := ScopeOf(ifs)
	seg := netip.PrefixFrom(pc, 24).Masked()
	if len(sc.Broadcast) != 1 || !seg.Contains(sc.Broadcast[0].Addr()) || len(sc.LLMNR) == 0 {
		t.Fatalf("the client namespace's interfaces give %s; want one broadcast inside %s and the LLMNR groups", sc, seg)
	}
	return sc, pc
}

func TestLabLookup(t *testing.T) {
	lab := testlab.Require(t)
	sc, pc := labScope(t, lab)
	ctx := context.Background()
	ask := func(t *testing.T, sc Scope, name string) Result {
		t.Helper()
		r, err := (&Asker{Scope: sc, Wait: DefaultWait}).Lookup(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s in %s: asked %v; answers %v; negative %v; invalid %v; failed %v", name, r.Waited.Round(time.Millisecond), r.Asked, r.Answers, r.Negative, r.Invalid, r.Failed)
		if len(r.Invalid)+len(r.Failed) != 0 {
			t.Errorf("invalid %v, failed %v", r.Invalid, r.Failed)
		}
		return r
	}
	only := func(t *testing.T, r Result, p Protocol, via string) {
		t.Helper()
		if !r.Found() {
			t.Fatalf("no answer for %s", r.Name)
		}
		for _, a := range r.Answers {
			// over IPv6, llmnrd answers from its link-local address
			from := a.From.Addr() == pc || a.From.Addr().IsLinkLocalUnicast()
			if a.Protocol != p || a.Via != via || !from || len(a.Addrs) != 1 || a.Addrs[0] != pc {
				t.Errorf("answer %s; want %s %s from %s giving %s", a, p, via, pc, pc)
			}
		}
	}
	t.Run("nmbd answers a NetBIOS broadcast", func(t *testing.T) {
		r := ask(t, sc, strings.ToLower(lab.PCNetBIOS))
		only(t, r, NetBIOS, "broadcast")
		if len(r.Answers) != 1 {
			t.Errorf("answers %v, want one", r.Answers)
		}
		if r.Waited > DefaultWait {
			t.Errorf("waited %s", r.Waited)
		}
	})
	t.Run("llmnrd answers LLMNR", func(t *testing.T) {
		r := ask(t, sc, lab.PCLLMNR)
		only(t, r, LLMNR, "multicast")
		if len(r.Answers) != 2 {
			t.Errorf("answers %v, want one over IPv4 and one over IPv6", r.Answers)
		}
	})
	t.Run("nmbd as WINS server", func(t *testing.T) {
		wins := Scope{}.WithWINS(pc)
		only(t, ask(t, wins, lab.PCNetBIOS), NetBIOS, "wins")
		r := ask(t, wins, "nosuchhost")
		if r.Found() || len(r.Negative) != 1 || !strings.Contains(r.Negative[0], "NAM_ERR") {
			t.Fatalf("WINS on an unknown name: %+v", r)
		}
	})
	t.Run("the DC's nbt server answers its own name", func(t *testing.T) {
		r := ask(t, Scope{Broadcast: sc.Broadcast}, "dc1")
		if a, _, ok := r.Addr(); !ok || a.String() != lab.DCIP {
			t.Fatalf("dc1: %v", r.Answers)
		}
	})
	t.Run("nobody knows the name", func(t *testing.T) {
		r := ask(t, sc, "nosuchhost")
		if r.Found() || len(r.Asked) != len(sc.Broadcast)+len(sc.LLMNR) {
			t.Fatalf("%+v", r)
		}
		if r.Waited < DefaultWait-10*time.Millisecond || r.Waited > DefaultWait+time.Second {
			t.Errorf("waited %s, want about %s", r.Waited, DefaultWait)
		}
	})
}
