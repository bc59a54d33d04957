package snmp

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/resolve"
)

// Closing the mail listener right after Open, before its Serve goroutine
// has registered the socket, once left Accept blocked and Close waiting
// forever. 100 open/close pairs, each bounded by 2 s.
func TestMailListenerCloseRightAfterOpen(t *testing.T) {
	for i := range 100 {
		m, err := NewMailListener(DefaultMailListenerConfig("127.0.0.1:0"), DefaultRules(DefaultCodeBook()),
			NewRecorder(NewMemorySink(0, 0), nil, nil, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		addr := m.Addr().String()
		closed := make(chan struct{})
		go func() { m.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(2 * time.Second):
			t.Fatalf("close %d: still waiting after 2 s", i)
		}
		if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			t.Fatalf("close %d: %s still accepts", i, addr)
		}
	}
}

// A session the server has accepted is closed by Close too: an SMTP client
// that holds its connection open does not keep Close waiting.
func TestMailListenerCloseEndsSessions(t *testing.T) {
	cfg := DefaultMailListenerConfig("127.0.0.1:0")
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	m, err := NewMailListener(cfg, DefaultRules(DefaultCodeBook()),
		NewRecorder(NewMemorySink(0, 0), nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 5 {
		c, err := net.DialTimeout("tcp", m.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 512)); err != nil { // the greeting
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	start := time.Now()
	m.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s with open sessions", d)
	}
	for _, c := range conns {
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
					t.Error("a session stayed open after Close")
				}
				break
			}
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A Watcher over a silent device with both listeners stops within 2 s of
// Close, at whatever point of its start it is; 50 runs.
func TestWatcherCloseIsPrompt(t *testing.T) {
	for i := range 50 {
		cfg := DefaultWatcherConfig()
		cfg.Targets = []Target{{Host: "127.0.0.1", Port: 9, Timeout: 5 * time.Second}}
		cfg.Poller.Interval = time.Second
		tc := DefaultTrapListenerConfig("127.0.0.1:0", scanwarden.NewSecret("traps"))
		mc := DefaultMailListenerConfig("127.0.0.1:0")
		cfg.Traps, cfg.Mail = &tc, &mc
		cfg.Rules, cfg.Store = DefaultRules(DefaultCodeBook()), NewMemorySink(0, 0)
		w, err := NewWatcher(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%10) * 5 * time.Millisecond)
		start := time.Now()
		w.Close()
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("run %d: Close took %s", i, d)
		}
		select {
		case <-w.Done():
		default:
			t.Fatalf("run %d: Done not closed after Close", i)
		}
	}
}

func TestWatcherConfigZeroIsNotDefault(t *testing.T) {
	base := DefaultWatcherConfig()
	base.Rules, base.Store = DefaultRules(DefaultCodeBook()), NewMemorySink(0, 0)
	base.Targets = []Target{{Host: "127.0.0.1"}}
	if err := base.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, mod := range map[string]func(*WatcherConfig){
		"interval":         func(c *WatcherConfig) { c.Poller.Interval = 0 },
		"workers":          func(c *WatcherConfig) { c.Poller.Workers = 0 },
		"cycles":           func(c *WatcherConfig) { c.Cycles = -1 },
		"sweep":            func(c *WatcherConfig) { c.Networks = []netip.Prefix{mustPrefix(t, "127.0.0.0/30")}; c.Sweep.Rate = 0 },
		"nothing to watch": func(c *WatcherConfig) { c.Targets = nil },
		"store":            func(c *WatcherConfig) { c.Store = nil },
	} {
		c := base
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A device given by name is resolved: its address is allowed to send
// traps and mail, and they are that device's.
func TestWatcherResolvesNamedDevices(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	w := openWatch(t, sink, nil, func(c *WatcherConfig) {
		c.Targets = []Target{{Host: "localhost", Port: 9, Timeout: time.Second}}
	})
	waitFor(t, "localhost resolved", func() bool { return w.isDevice(netip.MustParseAddr("127.0.0.1")) })
	if err := sendFrom(deviceIP, w.mail.Addr().String(), kyoceraMail); err != nil {
		t.Fatal(err)
	}
	if evs := sink.Snapshot(); len(evs) != 1 || evs[0].Device != "localhost:9" || evs[0].Unverified {
		t.Errorf("events %+v", evs)
	}
}

// failingDNS is a fake resolver (no DNS server here fails on demand): a
// name resolves to its addresses in zone, anything else is not found.
type failingDNS struct {
	mu   sync.Mutex
	zone map[string][]netip.Addr
}

func (f *failingDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ips, ok := f.zone[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
}

func (f *failingDNS) set(zone map[string][]netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.zone = zone
}

// warnLog records the WARN lines' messages.
type warnLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *warnLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *warnLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.mu.Lock()
		h.msgs = append(h.msgs, r.Message)
		h.mu.Unlock()
	}
	return nil
}
func (h *warnLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *warnLog) WithGroup(string) slog.Handler      { return h }

// count is how many WARN lines contain s.
func (h *warnLog) count(s string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// A device given by name keeps its mail through a DNS hiccup: once its
// name no longer resolves, the address it last resolved to is still
// taken (a warning says so, once). Once it is no longer watched that
// address is refused, and when it is watched again while DNS still fails,
// too (a name never resolved is only polled). Each refusal is the SMTP
// 554 at connect, each admission the event stored: no waiting for
// nothing. The resolver is a fake: no DNS server here fails on demand.
func TestWatcherNamesKeepLastGood(t *testing.T) {
	dns := &failingDNS{zone: map[string][]netip.Addr{"localhost": {deviceIP}}}
	logs := &warnLog{}
	sink := NewMemorySink(time.Hour, 0)
	named := []Target{{Host: "localhost", Port: 9, Timeout: time.Second}}
	w := openWatch(t, sink, slog.New(logs), func(c *WatcherConfig) {
		c.Targets, c.Names = named, resolve.NewCache(dns, time.Second)
	})
	waitFor(t, "localhost resolved", func() bool { return w.isDevice(deviceIP) })
	mail := func(job string) error {
		return sendFrom(deviceIP, w.mail.Addr().String(), strings.Replace(kyoceraMail, "job-58", job, 1))
	}
	devices := func() []string {
		var out []string
		for _, ev := range sink.Snapshot() {
			out = append(out, ev.Device)
		}
		return out
	}
	if err := mail("job-1"); err != nil {
		t.Fatalf("resolved: %v", err)
	}

	dns.set(nil) // DNS fails from now on
	w.ResolveNames(context.Background())
	w.ResolveNames(context.Background())
	if err := mail("job-2"); err != nil {
		t.Fatalf("DNS down, last good kept: %v", err)
	}
	if got := devices(); !slices.Equal(got, []string{"localhost:9", "localhost:9"}) {
		t.Fatalf("events from %v", got)
	}
	if n := logs.count("still taken from the addresses it last resolved to"); n != 1 {
		t.Errorf("%d warnings that the last good address is kept, want 1: %q", n, logs.msgs)
	}

	if err := w.SetTargets([]Target{{Host: "127.0.0.3", Port: 9, Timeout: time.Second}}); err != nil {
		t.Fatal(err)
	}
	if err := mail("job-3"); err == nil || !strings.Contains(err.Error(), "554") {
		t.Fatalf("no longer watched: %v, want 554", err)
	}
	if err := w.SetTargets(named); err != nil {
		t.Fatal(err)
	}
	if err := mail("job-4"); err == nil || !strings.Contains(err.Error(), "554") {
		t.Fatalf("watched again, DNS down, its last address forgotten: %v, want 554", err)
	}
	if n := logs.count("its traps and mail are not allowed"); n != 1 {
		t.Errorf("%d warnings that the name does not resolve, want 1: %q", n, logs.msgs)
	}
	if got := devices(); len(got) != 2 {
		t.Errorf("events from %v", got)
	}
}
