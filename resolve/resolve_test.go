package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeDNS is a fake resolver (no DNS server here can be made to fail on
// demand): a name in zone resolves to its addresses, "slow" blocks until
// the lookup's context ends, anything else is not found. It records the
// names asked for.
type fakeDNS struct {
	mu    sync.Mutex
	zone  map[string][]netip.Addr
	asked []string
}

func (f *fakeDNS) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	f.asked = append(f.asked, host)
	ips, ok := f.zone[strings.ToLower(host)]
	f.mu.Unlock()
	if network != "ip" {
		return nil, fmt.Errorf("network %q", network)
	}
	if host == "slow" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if !ok {
		return nil, errors.New("no such host")
	}
	return ips, nil
}

func (f *fakeDNS) set(zone map[string][]netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.zone, f.asked = zone, nil
}

func ips(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// TestCache: one cache through a sequence of lookups — each step sets
// what DNS answers, asks for hosts and checks every result (addresses,
// stale, failed) and which names went to DNS.
func TestCache(t *testing.T) {
	type want struct {
		addrs  []netip.Addr
		stale  bool
		failed bool
	}
	dns := &fakeDNS{}
	c := NewCache(dns, 50*time.Millisecond)
	for _, step := range []struct {
		name  string
		zone  map[string][]netip.Addr
		hosts []string
		want  map[string]want
		asked []string
	}{
		{name: "IP addresses pass through without DNS, unmapped",
			hosts: []string{"10.0.0.5", "[fe80::1]", "::ffff:10.0.0.6", "fe80::2%eth0"},
			want: map[string]want{"10.0.0.5": {addrs: ips("10.0.0.5")}, "[fe80::1]": {addrs: ips("fe80::1")},
				"::ffff:10.0.0.6": {addrs: ips("10.0.0.6")}, "fe80::2%eth0": {addrs: ips("fe80::2%eth0")}}},
		{name: "names resolve, unmapped",
			zone:  map[string][]netip.Addr{"mfp1": ips("10.0.0.1"), "mfp2": ips("::ffff:10.0.0.2", "fd00::2")},
			hosts: []string{"MFP1", "mfp2", "10.0.0.9"},
			want:  map[string]want{"MFP1": {addrs: ips("10.0.0.1")}, "mfp2": {addrs: ips("10.0.0.2", "fd00::2")}, "10.0.0.9": {addrs: ips("10.0.0.9")}},
			asked: []string{"MFP1", "mfp2"}},
		{name: "a failed lookup keeps the last good addresses (any case); a name never resolved has none",
			zone:  map[string][]netip.Addr{},
			hosts: []string{"mfp1", "mfp2", "never"},
			want: map[string]want{"mfp1": {addrs: ips("10.0.0.1"), stale: true, failed: true},
				"mfp2": {addrs: ips("10.0.0.2", "fd00::2"), stale: true, failed: true}, "never": {failed: true}},
			asked: []string{"mfp1", "mfp2", "never"}},
		{name: "a lookup that hangs ends at the timeout and keeps the last good; a fresh answer replaces it",
			zone:  map[string][]netip.Addr{"mfp1": ips("10.0.0.11")},
			hosts: []string{"mfp1", "mfp2", "slow"},
			want: map[string]want{"mfp1": {addrs: ips("10.0.0.11")}, "mfp2": {addrs: ips("10.0.0.2", "fd00::2"), stale: true, failed: true},
				"slow": {failed: true}},
			asked: []string{"mfp1", "mfp2", "slow"}},
		{name: "a name not asked for is forgotten",
			zone:  map[string][]netip.Addr{},
			hosts: []string{"mfp1"},
			want:  map[string]want{"mfp1": {addrs: ips("10.0.0.11"), stale: true, failed: true}},
			asked: []string{"mfp1"}},
		{name: "so when it is asked for again and fails it has no address",
			zone:  map[string][]netip.Addr{},
			hosts: []string{"mfp1", "mfp2"},
			want:  map[string]want{"mfp1": {addrs: ips("10.0.0.11"), stale: true, failed: true}, "mfp2": {failed: true}},
			asked: []string{"mfp1", "mfp2"}},
	} {
		dns.set(step.zone)
		start := time.Now()
		got := c.Resolve(context.Background(), step.hosts)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: took %s (timeout 50ms)", step.name, took)
		}
		if len(got) != len(step.want) {
			t.Errorf("%s: %d results, want %d: %v", step.name, len(got), len(step.want), got)
		}
		for h, w := range step.want {
			r := got[h]
			if !slices.Equal(r.Addrs, w.addrs) || r.Stale() != w.stale || (r.Err != nil) != w.failed {
				t.Errorf("%s: %s: %v stale %v err %v, want %v stale %v failed %v", step.name, h, r.Addrs, r.Stale(), r.Err, w.addrs, w.stale, w.failed)
			}
		}
		slices.Sort(dns.asked)
		if !slices.Equal(dns.asked, step.asked) {
			t.Errorf("%s: asked DNS for %v, want %v", step.name, dns.asked, step.asked)
		}
	}
}

// TestCacheTimeoutIsPerName: a hanging lookup ends at the timeout and
// never holds up the others; the caller's context ends them all.
func TestCacheTimeoutIsPerName(t *testing.T) {
	dns := &fakeDNS{zone: map[string][]netip.Addr{"mfp": ips("10.0.0.1")}}
	c := NewCache(dns, 100*time.Millisecond)
	start := time.Now()
	got := c.Resolve(context.Background(), []string{"slow", "mfp"})
	if took := time.Since(start); took < 100*time.Millisecond || took > 2*time.Second {
		t.Errorf("took %s, want the 100ms timeout", took)
	}
	if !errors.Is(got["slow"].Err, context.DeadlineExceeded) || !slices.Equal(got["mfp"].Addrs, ips("10.0.0.1")) {
		t.Errorf("%+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got = NewCache(dns, 0).Resolve(ctx, []string{"slow"})
	if !errors.Is(got["slow"].Err, context.Canceled) {
		t.Errorf("cancelled: %+v", got)
	}
}

// TestCacheConcurrent: lookups from many goroutines at once (run with
// -race) each get their answer, the last good included.
func TestCacheConcurrent(t *testing.T) {
	zone := map[string][]netip.Addr{}
	var hosts []string
	for i := range 20 {
		h := fmt.Sprintf("mfp%d", i)
		zone[h] = ips(fmt.Sprintf("10.0.1.%d", i))
		hosts = append(hosts, h)
	}
	dns := &fakeDNS{zone: zone}
	c := NewCache(dns, time.Second)
	c.Resolve(context.Background(), hosts)
	dns.set(map[string][]netip.Addr{}) // DNS down: every answer is the last good
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := c.Resolve(context.Background(), hosts)
			for i, h := range hosts {
				if r := got[h]; !r.Stale() || !slices.Equal(r.Addrs, zone[h]) {
					errs <- fmt.Errorf("%s (%d): %+v", h, i, r)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A name that stopped resolving keeps its last good addresses for MaxStale
// after it last resolved, then has none (a name deleted from DNS must not
// keep its old address admitted for ever); resolving again starts afresh.
func TestCacheStaleAtMostMaxStale(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	dns := &fakeDNS{zone: map[string][]netip.Addr{"mfp": ips("10.0.0.1")}}
	c := NewCache(dns, time.Second)
	c.now = func() time.Time { return now }
	if r := c.Resolve(ctx, []string{"mfp"})["mfp"]; r.Err != nil || !slices.Equal(r.Addrs, ips("10.0.0.1")) {
		t.Fatalf("resolving: %+v", r)
	}
	dns.set(map[string][]netip.Addr{})
	now = now.Add(MaxStale - time.Minute)
	if r := c.Resolve(ctx, []string{"mfp"})["mfp"]; !r.Stale() || !slices.Equal(r.Addrs, ips("10.0.0.1")) {
		t.Fatalf("not resolving for less than MaxStale: %+v", r)
	}
	now = now.Add(2 * time.Minute)
	if r := c.Resolve(ctx, []string{"mfp"})["mfp"]; r.Err == nil || len(r.Addrs) != 0 || r.Stale() {
		t.Fatalf("not resolving for more than MaxStale: %+v", r)
	}
	if r := c.Resolve(ctx, []string{"mfp"})["mfp"]; len(r.Addrs) != 0 {
		t.Fatalf("the dropped addresses came back: %+v", r)
	}
	dns.set(map[string][]netip.Addr{"mfp": ips("10.0.0.2")})
	if r := c.Resolve(ctx, []string{"mfp"})["mfp"]; r.Err != nil || !slices.Equal(r.Addrs, ips("10.0.0.2")) {
		t.Fatalf("resolving again: %+v", r)
	}
}
