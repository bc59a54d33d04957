package snmp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
)

// Closing the mail listener right after Open, before its Serve goroutine
// has registered the socket, once left Accept blocked and Close waiting
// forever. 100 open/close pairs, each bounded by 2 s.
func TestMailListenerCloseRightAfterOpen(t *testing.T) {
	for i := range 100 {
		m, err := NewMailListener(DefaultMailListenerConfig("127.0.0.1:0"), DefaultRules(DefaultCodeBook()),
			NewMemorySink(0, 0), NewDeviceIndex(), nil)
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
		NewMemorySink(0, 0), NewDeviceIndex(), nil)
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
		cfg.Rules, cfg.Sink = DefaultRules(DefaultCodeBook()), NewMemorySink(0, 0)
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
	base.Rules, base.Sink = DefaultRules(DefaultCodeBook()), NewMemorySink(0, 0)
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
		"sink":             func(c *WatcherConfig) { c.Sink = nil },
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
