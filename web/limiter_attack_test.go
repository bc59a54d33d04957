package web

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The login limiter under attack. Tests that need many source addresses
// serve the handler directly with httptest requests whose RemoteAddr is set
// (10,000 real sockets from 10,000 addresses are impractical here); the
// handler reads the peer from RemoteAddr exactly as under net/http.

// loginFrom posts a login as if from addr and returns the status.
func (s *site) loginFrom(addr netip.Addr, user, password string) int {
	form := url.Values{"user": {user}, "password": {password}, "next": {"/"}}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = netip.AddrPortFrom(addr, 40000).String()
	rec := httptest.NewRecorder()
	s.srv.Handler().ServeHTTP(rec, req)
	return rec.Code
}

// tally counts the answers: 401 = a guess evaluated and wrong, 429 =
// refused before any hash, 303 = logged in.
type tally map[int]int

func (t tally) String() string {
	var parts []string
	for code, n := range t {
		parts = append(parts, http.StatusText(code)+"="+strconv.Itoa(n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// 30 guesses sent at once from one address: the limit (5) is reserved
// before the hash, so at most 5 are evaluated (the old limiter checked
// before the hash and counted after it: all 30 were).
func TestAttackLoginConcurrentGuesses(t *testing.T) {
	s := newSite(t)
	var mu sync.Mutex
	got := tally{}
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, _ := s.post(s.anon(), "/login", url.Values{"user": {"admin"}, "password": {"wrong guess " + strconv.Itoa(i)}}, nil)
			mu.Lock()
			got[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("30 concurrent guesses from one address: %v", got)
	if got[http.StatusUnauthorized] > 5 || got[http.StatusUnauthorized]+got[http.StatusTooManyRequests] != 30 {
		t.Fatalf("evaluated %d of 30 concurrent guesses (%v), want at most 5", got[http.StatusUnauthorized], got)
	}
}

// 10,000 addresses guess once each with a user name that is not the
// admin's: the global budget bounds what is evaluated, the admin's own
// address still logs in during the flood, and a fresh address with the
// right password gets in as soon as the budget refills (the old limiter
// filled its table and refused every new address for 16 minutes).
func TestAttackLoginAddressFlood(t *testing.T) {
	s := newSite(t)
	desk := netip.MustParseAddr("192.0.2.10")
	if code := s.loginFrom(desk, "admin", testPassword); code != http.StatusSeeOther {
		t.Fatalf("admin before the flood: %d", code)
	}
	got := tally{}
	for i := 0; i < 10000; i++ {
		a := netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})
		got[s.loginFrom(a, "x", "guess")]++
	}
	t.Logf("10,000 addresses × 1 guess: %v", got)
	if got[http.StatusUnauthorized] > 30 {
		t.Fatalf("%d guesses evaluated, want at most 30 (one minute's budget)", got[http.StatusUnauthorized])
	}
	if code := s.loginFrom(desk, "admin", testPassword); code != http.StatusSeeOther {
		t.Fatalf("admin from their usual address during the flood: %d, want 303", code)
	}
	s.clock.Add(2 * time.Second) // one guess's worth of the per-minute budget
	if code := s.loginFrom(netip.MustParseAddr("198.51.100.7"), "admin", testPassword); code != http.StatusSeeOther {
		t.Fatalf("admin from a fresh address after the flood: %d, want 303", code)
	}
}

// Rotating through one IPv6 /64 (2^64 addresses) is capped by the /64's
// limit, also once the global budget has refilled; another network is not
// refused for it.
func TestAttackLoginPrefixRotation(t *testing.T) {
	s := newSite(t)
	base := netip.MustParseAddr("2001:db8:77:1::").As16()
	got := tally{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 300; i++ {
			a := base
			a[8], a[14], a[15] = byte(round), byte(i>>8), byte(i)
			got[s.loginFrom(netip.AddrFrom16(a), "x", "guess")]++
		}
		s.clock.Add(time.Minute) // the global budget refills; the /64 window does not end
	}
	t.Logf("900 addresses of one /64 × 1 guess over 3 min: %v", got)
	if got[http.StatusUnauthorized] > 20 {
		t.Fatalf("%d guesses from one /64 evaluated, want at most 20", got[http.StatusUnauthorized])
	}
	if code := s.loginFrom(netip.MustParseAddr("2001:db8:77:2::5"), "admin", testPassword); code != http.StatusSeeOther {
		t.Fatalf("the admin from another /64: %d, want 303", code)
	}
}

// A user name other than the admin's costs the same hash and counts the
// same: five guesses as "x" lock the address out like five as "admin".
func TestAttackLoginOtherUserSameCost(t *testing.T) {
	s := newSite(t)
	a := netip.MustParseAddr("192.0.2.20")
	b := netip.MustParseAddr("192.0.2.21")
	var dx, dadmin []time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		if code := s.loginFrom(a, "x", testPassword); code != http.StatusUnauthorized {
			t.Fatalf("user x, guess %d: %d", i+1, code)
		}
		dx = append(dx, time.Since(start))
		start = time.Now()
		if code := s.loginFrom(b, "admin", "wrong password"); code != http.StatusUnauthorized {
			t.Fatalf("user admin, guess %d: %d", i+1, code)
		}
		dadmin = append(dadmin, time.Since(start))
	}
	sort.Slice(dx, func(i, j int) bool { return dx[i] < dx[j] })
	sort.Slice(dadmin, func(i, j int) bool { return dadmin[i] < dadmin[j] })
	t.Logf("median: user x %v, user admin %v", dx[2], dadmin[2])
	if dx[2] < dadmin[2]/3 {
		t.Errorf("a wrong user name answers in %v, the admin's in %v: the name is told by its cost", dx[2], dadmin[2])
	}
	if code := s.loginFrom(a, "admin", testPassword); code != http.StatusTooManyRequests {
		t.Errorf("after 5 guesses as x, the right password: %d, want 429", code)
	}
}
