package localname

import (
	"net/netip"
	"testing"
)

// FuzzParseNBNSResponse: any bytes give a response or an error naming the
// field, never a panic; what parses is self-consistent.
func FuzzParseNBNSResponse(f *testing.F) {
	f.Add(nbnsAnswer(f, 1, "work", ServerSuffix, 0, netip.MustParseAddr("10.0.0.5")))
	f.Add(nbnsAnswer(f, 2, "nbpc", 0x00, 3))
	f.Add(nbnsAnswer(f, 3, "x", ServerSuffix, 0, netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("10.0.0.6")))
	q, _ := nbnsQuery(4, "work", ServerSuffix, true)
	f.Add(q)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseNBNSResponse(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if r.Rcode != 0 || len(r.Entries) == 0 || len(r.Name) > NetBIOSNameLen {
			t.Fatalf("accepted %+v", r)
		}
		for _, e := range r.Entries {
			if !e.Addr.Is4() {
				t.Fatalf("entry %v is not IPv4", e.Addr)
			}
		}
	})
}

// FuzzParseLLMNRResponse: the same for LLMNR, whose names may be compressed.
func FuzzParseLLMNRResponse(f *testing.F) {
	f.Add(llmnrAnswer(1, 0, "work", netip.MustParseAddr("10.0.0.5")))
	f.Add(llmnrAnswer(2, llmnrC|llmnrT, "work", netip.MustParseAddr("10.0.0.5"), netip.MustParseAddr("fe80::5")))
	f.Add(llmnrAnswer(3, 2, "work"))
	q, _ := llmnrQuery(4, "work", typeA)
	f.Add(q)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseLLMNRResponse(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if r.Rcode != 0 || len(r.Name) > maxName {
			t.Fatalf("accepted %+v", r)
		}
		for _, a := range r.Addrs {
			if !a.IsValid() {
				t.Fatalf("invalid address in %+v", r)
			}
		}
	})
}
