package web

import (
	"net/netip"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/internal/trusted"
)

// limiter bounds the password guesses the login form evaluates. A guess is
// reserved before the (slow) hash and counts as a failure from that moment,
// so a request cut during the hash, or thirty sent at once, cannot slip
// past; only the right password gives the reservation back. Three limits
// apply, each checked before anything is evaluated:
//
//   - per client address: perAddr reservations in a window;
//   - per IPv6 /64 (one LAN or one host's privacy addresses): perPrefix in
//     a window;
//   - for the whole box: perMinute evaluated guesses a minute (a bucket
//     refilled continuously), so rotating addresses gains nothing.
//
// Addresses the admin recently used with a live session or the right
// password are trusted: they are exempt from the /64 and the global limits
// (an attacker's flood does not lock the admin out of their own desk), never
// from their own address's limit. The tables only grow by reserved guesses,
// which the global bucket bounds; should one fill anyway, an address that has
// not failed is let through uncounted rather than refused.
type limiter struct {
	mu        sync.Mutex
	now       func() time.Time
	perAddr   int
	perPrefix int
	perMinute int
	window    time.Duration

	tokens   float64 // global bucket
	refilled time.Time
	addrs    map[netip.Addr]*window
	prefixes map[netip.Prefix]*window
	trusted  trusted.Addrs
}

type window struct {
	start    time.Time
	failures int
}

const (
	limiterCap = 10000
)

// limits are the login limiter's settings (Config's Login* fields).
type limits struct {
	perAddr, perPrefix, perMinute int
	window                        time.Duration
}

func newLimiter(l limits, now func() time.Time) *limiter {
	return &limiter{now: now, perAddr: l.perAddr, perPrefix: l.perPrefix, perMinute: l.perMinute, window: l.window,
		tokens: float64(l.perMinute), refilled: now(),
		addrs: map[netip.Addr]*window{}, prefixes: map[netip.Prefix]*window{}}
}

// ticket is one reserved guess, given back by succeed.
type ticket struct {
	addr   netip.Addr
	prefix netip.Prefix // invalid for IPv4
	global bool         // took a token from the global bucket
}

// Why a guess was refused.
const (
	refusedAddr   = "address"
	refusedPrefix = "network"
	refusedGlobal = "global"
)

// reserve takes one guess for addr, or says which limit refuses it and how
// long until it may try again.
func (l *limiter) reserve(addr netip.Addr) (t ticket, refused string, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.refill(now)
	t.addr = addr
	if addr.Is6() {
		t.prefix, _ = addr.Prefix(64)
	}
	admin := l.trusted.Has(addr, now)

	if w := live(l.addrs, addr, now, l.window); w != nil && w.failures >= l.perAddr {
		return ticket{}, refusedAddr, w.start.Add(l.window).Sub(now)
	}
	if !admin && t.prefix.IsValid() {
		if w := live(l.prefixes, t.prefix, now, l.window); w != nil && w.failures >= l.perPrefix {
			return ticket{}, refusedPrefix, w.start.Add(l.window).Sub(now)
		}
	}
	if !admin {
		if l.tokens < 1 {
			return ticket{}, refusedGlobal, time.Duration((1 - l.tokens) * float64(time.Minute) / float64(l.perMinute))
		}
		l.tokens--
		t.global = true
	}
	count(l.addrs, addr, now, l.window)
	if t.prefix.IsValid() {
		count(l.prefixes, t.prefix, now, l.window)
	}
	return t, "", 0
}

// succeed gives the reservation back (the password was right), forgets the
// address's failures and trusts it.
func (l *limiter) succeed(t ticket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.addrs, t.addr)
	if t.prefix.IsValid() {
		uncount(l.prefixes, t.prefix)
	}
	if t.global && l.tokens+1 <= float64(l.perMinute) {
		l.tokens++
	}
	l.trusted.Trust(t.addr, l.now())
}

// trust marks addr as the admin's (a request with a live session).
func (l *limiter) trust(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trusted.Trust(addr, l.now())
}

func (l *limiter) refill(now time.Time) {
	if d := now.Sub(l.refilled); d > 0 {
		l.tokens += d.Minutes() * float64(l.perMinute)
		if max := float64(l.perMinute); l.tokens > max {
			l.tokens = max
		}
	}
	l.refilled = now
}

// live returns k's window if it has not ended (an ended one is dropped).
func live[K comparable](m map[K]*window, k K, now time.Time, d time.Duration) *window {
	w := m[k]
	if w != nil && now.Sub(w.start) >= d {
		delete(m, k)
		return nil
	}
	return w
}

// count adds one failure to k's window, starting one if needed. A full
// table first drops ended windows; if none has ended, k goes uncounted.
func count[K comparable](m map[K]*window, k K, now time.Time, d time.Duration) {
	w := live(m, k, now, d)
	if w == nil {
		if len(m) >= limiterCap {
			for k2, w2 := range m {
				if now.Sub(w2.start) >= d {
					delete(m, k2)
				}
			}
			if len(m) >= limiterCap {
				return
			}
		}
		w = &window{start: now}
		m[k] = w
	}
	w.failures++
}

func uncount[K comparable](m map[K]*window, k K) {
	if w := m[k]; w != nil {
		if w.failures--; w.failures <= 0 {
			delete(m, k)
		}
	}
}
