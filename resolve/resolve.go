// Package resolve turns device names into addresses with one policy, used
// by the SNMP watcher (which devices' traps and mail are taken) and the
// fallback share (which addresses smbd admits): an IP address passes
// through without DNS, a name is looked up within a timeout, and a name that
// does not resolve now keeps the addresses it last resolved to — a DNS
// hiccup does not lock a device out — for MaxStale at most (a name deleted
// from DNS does not keep its old address admitted for ever). A name no
// longer asked for is
// forgotten (the device is gone or was readdressed). It imports nothing of
// scanwarden's, so that every package can use it.
package resolve

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Resolver looks a host name up; *net.Resolver is one (network "ip").
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Result is what one host resolves to.
type Result struct {
	// Addrs are the host's addresses, unmapped (an IPv4-mapped IPv6
	// address is given as IPv4): those of this lookup, or the last good
	// ones when it failed (Stale). None when it never resolved.
	Addrs []netip.Addr
	// Err is this lookup's error (nil for an IP address).
	Err error
}

// MaxStale is how long a name that stopped resolving keeps the addresses
// it last resolved to.
const MaxStale = 24 * time.Hour

// Stale reports whether the lookup failed and Addrs are the last good ones.
func (r Result) Stale() bool { return r.Err != nil && len(r.Addrs) > 0 }

// Cache resolves host names and keeps each name's last good addresses.
// It is safe for concurrent use; two callers that ask for different sets
// of names should each have their own (each call forgets the names it
// was not asked for).
type Cache struct {
	r       Resolver
	timeout time.Duration
	workers int

	now      func() time.Time
	maxStale time.Duration

	mu   sync.Mutex
	last map[string]good // lower-cased name → last good addresses
}

// good is a name's last good addresses and when it last resolved to them.
type good struct {
	addrs []netip.Addr
	at    time.Time
}

// NewCache looks names up with r (nil: the system's resolver), each within
// timeout (0: only the caller's context bounds it), 8 at a time.
func NewCache(r Resolver, timeout time.Duration) *Cache {
	if r == nil {
		r = net.DefaultResolver
	}
	return &Cache{r: r, timeout: timeout, workers: 8, now: time.Now, maxStale: MaxStale, last: map[string]good{}}
}

// Addr reads host as an IP address: bare or in brackets (an IPv6 address
// as a URL writes it), unmapped; false for a name.
func Addr(host string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// Resolve looks each of hosts up (ctx bounds them all) and returns what
// each resolves to, keyed as given. An IP address is its own result; a name
// that does not resolve keeps its last good addresses (Result.Stale) for
// MaxStale after it last resolved, then has none. Names not among hosts are
// forgotten.
func (c *Cache) Resolve(ctx context.Context, hosts []string) map[string]Result {
	out := make(map[string]Result, len(hosts))
	var names []string
	for _, h := range hosts {
		if ip, ok := Addr(h); ok {
			out[h] = Result{Addrs: []netip.Addr{ip}}
		} else if _, dup := out[h]; !dup {
			out[h] = Result{}
			names = append(names, h)
		}
	}
	looked := make([]Result, len(names))
	sem := make(chan struct{}, c.workers)
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			looked[i] = c.lookup(ctx, name)
		}()
	}
	wg.Wait()

	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	asked := make(map[string]bool, len(names))
	for i, name := range names {
		key := strings.ToLower(name)
		asked[key] = true
		r := looked[i]
		switch g, ok := c.last[key]; {
		case r.Err == nil:
			c.last[key] = good{addrs: r.Addrs, at: now}
		case ok && now.Sub(g.at) <= c.maxStale:
			r.Addrs = g.addrs
		case ok: // not resolved for longer than maxStale: dropped
			delete(c.last, key)
		}
		out[name] = r
	}
	for key := range c.last {
		if !asked[key] {
			delete(c.last, key) // the device is gone or was readdressed
		}
	}
	return out
}

// lookup resolves one name within the timeout; no address is an error.
func (c *Cache) lookup(ctx context.Context, name string) Result {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	ips, err := c.r.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return Result{Err: err}
	}
	if len(ips) == 0 {
		return Result{Err: &net.DNSError{Err: "no address", Name: name, IsNotFound: true}}
	}
	out := make([]netip.Addr, len(ips))
	for i, ip := range ips {
		out[i] = ip.Unmap()
	}
	return Result{Addrs: out}
}
