package smbcheck

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/localname"
)

// fakeResolver answers from a function (a fake DNS: no packet is sent).
type fakeResolver struct {
	lookup func(host string) ([]string, error)
}

func (f fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	return f.lookup(host)
}

// fakeLocalNames answers NetBIOS/LLMNR lookups from a function and counts them.
type fakeLocalNames struct {
	lookup func(name string) localname.Result
	asked  *int
}

func (f fakeLocalNames) Lookup(_ context.Context, name string) (localname.Result, error) {
	*f.asked++
	return f.lookup(name), nil
}

// TestNameStepLocalNames: what the name step does with the answer of the
// NetBIOS/LLMNR lookup, and when it asks at all (fakes on both sides; the
// real peers are TestLabNameNotInDNS's).
func TestNameStepLocalNames(t *testing.T) {
	notFound := func(host string) ([]string, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	pc := netip.MustParseAddr("192.0.2.60")
	answered := func(name string) localname.Result {
		return localname.Result{Name: name, Asked: []string{"netbios broadcast 192.0.2.255:137"}, Answers: []localname.Answer{
			{Protocol: localname.LLMNR, Via: "multicast", From: netip.AddrPortFrom(netip.MustParseAddr("fe80::1"), 5355), Addrs: []netip.Addr{netip.MustParseAddr("fe80::60")}},
			{Protocol: localname.NetBIOS, Via: "broadcast", From: netip.AddrPortFrom(pc, 137), Addrs: []netip.Addr{pc}},
		}}
	}
	silent := func(name string) localname.Result {
		return localname.Result{Name: name, Asked: []string{"netbios broadcast 192.0.2.255:137", "llmnr multicast 224.0.0.252:5355 on eth0"}}
	}
	for _, tc := range []struct {
		name    string
		dns     func(string) ([]string, error)
		local   func(string) localname.Result
		asks    int
		want    scanwarden.Cause
		detail  string
		fix     string
		evKey   string
		evValue any
	}{
		{"answered", notFound, answered, 1, scanwarden.CauseNameNotInDNS, "work is not in DNS, but 192.0.2.60 answers for it over NetBIOS and LLMNR (broadcast from 192.0.2.60)",
			"add an A record work → 192.0.2.60 in DNS (zone corp.example)", "answer_address", "192.0.2.60"},
		{"nobody answers", notFound, silent, 1, scanwarden.CauseNameUnresolved, "work does not resolve", "", "netbios_llmnr_asked", []string{"netbios broadcast 192.0.2.255:137", "llmnr multicast 224.0.0.252:5355 on eth0"}},
		{"DNS does not answer", func(host string) ([]string, error) {
			return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
		}, answered, 0, scanwarden.CauseNameUnresolved, "work: the DNS server did not answer", "", "netbios_llmnr_not_asked", "DNS did not say the name does not exist (i/o timeout)"},
		{"DNS resolves", func(string) ([]string, error) { return []string{"192.0.2.7"}, nil }, answered, 0, scanwarden.CauseOK, "", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := 0
			c := &checker{t: scanwarden.Target{Host: "work", Share: "s"}, o: Options{Resolver: fakeResolver{tc.dns}, LocalNames: fakeLocalNames{tc.local, &asked},
				DNSDomains: []string{"corp.example"}, resolvConf: os.DevNull}}
			c.o.defaults()
			c.t.Password = scanwarden.NewSecret("x")
			addrs := nameStep{c}.stepName(context.Background())
			if asked != tc.asks {
				t.Errorf("NetBIOS/LLMNR asked %d times, want %d", asked, tc.asks)
			}
			s := c.r.Steps[len(c.r.Steps)-1]
			if tc.want == scanwarden.CauseOK {
				if s.Status == StatusFail || len(addrs) != 1 {
					t.Fatalf("step %+v", s)
				}
				return
			}
			if s.Cause != tc.want || !strings.HasPrefix(s.Detail, tc.detail) || addrs != nil {
				t.Fatalf("step %s %q %v", s.Cause, s.Detail, s.Evidence)
			}
			if fix := c.firstFx.fix; !strings.Contains(fix, tc.fix) {
				t.Errorf("fix %q, want %q in it", fix, tc.fix)
			}
			if got := s.Evidence[tc.evKey]; fmt.Sprint(got) != fmt.Sprint(tc.evValue) {
				t.Errorf("evidence %s = %v, want %v (all: %v)", tc.evKey, got, tc.evValue, s.Evidence)
			}
		})
	}
}
