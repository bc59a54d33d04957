package snmp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"
)

// prefixSize is the number of addresses in p (saturating).
func prefixSize(p netip.Prefix) uint64 {
	bits := p.Addr().BitLen() - p.Bits()
	if bits >= 63 {
		return 1 << 63
	}
	return 1 << uint(bits)
}

// ExpandPrefix lists the addresses of p (network and broadcast included
// for IPv4 /31 and /32 only), refusing more than max.
func ExpandPrefix(p netip.Prefix, max int) ([]netip.Addr, error) {
	p = p.Masked()
	if n := prefixSize(p); n > uint64(max) {
		return nil, fmt.Errorf("%s has %d addresses, more than the limit %d", p, n, max)
	}
	var out []netip.Addr
	for a := p.Addr(); p.Contains(a); a = a.Next() {
		out = append(out, a)
		if !a.Next().IsValid() {
			break
		}
	}
	if p.Addr().Is4() && p.Bits() < 31 && len(out) > 2 {
		out = out[1 : len(out)-1]
	}
	return out, nil
}

// SweepOptions bound a sweep; Sweep takes a zero field from
// DefaultSweepOptions.
type SweepOptions struct {
	Port    uint16 // default 161
	Max     int    // most addresses (default DefaultSweepMax)
	Rate    int    // identifications started per second (default 50)
	Workers int    // concurrent identifications (default 16)
}

// DefaultSweepMax is how many addresses a sweep covers at most by default.
const DefaultSweepMax = 1024

// DefaultSweepOptions are a sweep's usual bounds: port 161, at most 1,024
// addresses, 50 a second, 16 at a time.
func DefaultSweepOptions() SweepOptions {
	return SweepOptions{Port: DefaultPort, Max: DefaultSweepMax, Rate: 50, Workers: 16}
}

// Sweep identifies every address of the prefixes with tmpl's credentials
// and returns the devices that answered. It is bounded in addresses (Max)
// and rate (Rate), and stops when ctx ends. Addresses that stay silent are
// simply absent.
func Sweep(ctx context.Context, prefixes []netip.Prefix, tmpl Target, opt SweepOptions) ([]Inventory, error) {
	opt = opt.withDefaults()
	addrs, err := sweepAddrs(prefixes, opt.Max)
	if err != nil {
		return nil, err
	}
	work := make(chan netip.Addr)
	var mu sync.Mutex
	var found []Inventory
	var wg sync.WaitGroup
	for i := 0; i < opt.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient()
			for a := range work {
				t := tmpl
				t.Host, t.Port = a.String(), opt.Port
				if inv, ok := identifyAt(ctx, c, t.withDefaults()); ok {
					mu.Lock()
					found = append(found, inv)
					mu.Unlock()
				}
			}
		}()
	}
	tick := time.NewTicker(time.Second / time.Duration(opt.Rate))
	defer tick.Stop()
feed:
	for _, a := range addrs {
		select {
		case <-ctx.Done():
			break feed
		case <-tick.C:
		}
		select {
		case work <- a:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return found, ctx.Err()
}

// withDefaults fills what opt leaves unset (a zero port, a Max, Rate or
// Workers not above zero) from DefaultSweepOptions.
func (opt SweepOptions) withDefaults() SweepOptions {
	def := DefaultSweepOptions()
	if opt.Port == 0 {
		opt.Port = def.Port
	}
	if opt.Max <= 0 {
		opt.Max = def.Max
	}
	if opt.Rate <= 0 {
		opt.Rate = def.Rate
	}
	if opt.Workers <= 0 {
		opt.Workers = def.Workers
	}
	return opt
}

// sweepAddrs are the prefixes' addresses, at most max of them.
func sweepAddrs(prefixes []netip.Prefix, max int) ([]netip.Addr, error) {
	var addrs []netip.Addr
	for _, p := range prefixes {
		as, err := ExpandPrefix(p, max-len(addrs))
		if err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		addrs = append(addrs, as...)
	}
	if len(addrs) == 0 {
		return nil, errors.New("sweep: no addresses")
	}
	return addrs, nil
}

// identifyAt identifies the device at t with c; false when it did not
// answer.
func identifyAt(ctx context.Context, c *client, t Target) (Inventory, bool) {
	if err := c.connect(ctx, t, 1, nil); err != nil {
		return Inventory{}, false
	}
	inv, err := identify(ctx, c, t.Addr(), t.Version == V1)
	c.close()
	if err != nil {
		return Inventory{}, false
	}
	inv.SeenAt = time.Now()
	return inv, true
}
