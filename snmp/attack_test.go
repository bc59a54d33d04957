package snmp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/smtp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/scanwarden/scanwarden"
)

// The attacks of issue 8 against the listeners, each as a test. Loopback
// plays the LAN: 127.0.0.1 is the watched device, 127.0.0.2 another host
// (an attacker, or a relay when allowed). Every flood is bounded.

var (
	deviceIP   = netip.MustParseAddr("127.0.0.1")
	attackerIP = netip.MustParseAddr("127.0.0.2")
)

// countingHandler counts WARN lines (the junk log).
type countingHandler struct{ n atomic.Int64 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.n.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// openWatch runs a Watcher over one silent device at 127.0.0.1 (polled
// once an hour: the listeners are under test) with both listeners.
func openWatch(t *testing.T, sink Store, log *slog.Logger, mod func(*WatcherConfig)) *Watcher {
	t.Helper()
	cfg := DefaultWatcherConfig()
	cfg.Targets = []Target{{Host: deviceIP.String(), Port: 9, Timeout: time.Second}}
	cfg.Poller.Interval = time.Hour
	tc := DefaultTrapListenerConfig("127.0.0.1:0", scanwarden.NewSecret("trap-secret"))
	mc := DefaultMailListenerConfig("127.0.0.1:0")
	cfg.Traps, cfg.Mail = &tc, &mc
	cfg.Rules, cfg.Store, cfg.Log = DefaultRules(DefaultCodeBook()), sink, log
	if mod != nil {
		mod(&cfg)
	}
	w, err := NewWatcher(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// smtpFrom opens an SMTP client to addr from the local address ip.
func smtpFrom(ip netip.Addr, addr string) (*smtp.Client, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip.AsSlice()}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	host, _, _ := net.SplitHostPort(addr)
	cl, err := smtp.NewClient(c, host)
	if err != nil {
		c.Close()
		return nil, err
	}
	return cl, nil
}

// sendFrom sends msg over SMTP from ip.
func sendFrom(ip netip.Addr, addr, msg string) error {
	cl, err := smtpFrom(ip, addr)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.Mail("mfp02@kyolab.test"); err != nil {
		return err
	}
	if err := cl.Rcpt("scanwarden@kyolab.test"); err != nil {
		return err
	}
	wc, err := cl.Data()
	if err != nil {
		return err
	}
	if _, err := wc.Write([]byte(msg)); err != nil {
		return err
	}
	if err := wc.Close(); err != nil {
		return err
	}
	return cl.Quit()
}

// Forged mail from an address that is no watched device and not allowed:
// refused at connect (554), nothing stored — even though it quotes the
// device's real serial.
func TestAttackForgedMailFromOtherAddress(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	w := openWatch(t, sink, nil, nil)
	w.index.Add(Inventory{Address: "127.0.0.1:9", Serial: "W4X0A20002"})
	for i := range 20 {
		forged := strings.Replace(kyoceraMail, "job-58", fmt.Sprintf("forged-%d", i), 1)
		err := sendFrom(attackerIP, w.mail.Addr().String(), forged)
		if err == nil || !strings.Contains(err.Error(), "554") {
			t.Fatalf("forged mail %d: err = %v, want 554 at connect", i, err)
		}
	}
	if evs := sink.Snapshot(); len(evs) != 0 {
		t.Fatalf("forged mail stored: %+v", evs)
	}
	if st := w.mail.Stats(); st.NotAllowed != 20 || st.Messages != 0 {
		t.Errorf("stats %+v", st)
	}
	// The device itself is heard.
	if err := sendFrom(deviceIP, w.mail.Addr().String(), kyoceraMail); err != nil {
		t.Fatal(err)
	}
	if evs := sink.Snapshot(); len(evs) != 1 || evs[0].Device != "127.0.0.1:9" || evs[0].Unverified {
		t.Fatalf("device mail: %+v", evs)
	}
}

// Mail through an allowed relay that quotes no known device is stored as
// unverified (not a device's failure); quoting a device's serial from
// another device's address does not make it that device's.
func TestAttackMailUnverifiedAndMisattributed(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	w := openWatch(t, sink, nil, func(c *WatcherConfig) {
		c.Mail.Allow = []netip.Prefix{netip.PrefixFrom(attackerIP, 32)}
	})
	w.index.Add(Inventory{Address: "127.0.0.3:161", Serial: "W4X0A20002"}) // another device, elsewhere
	unknown := strings.Replace(strings.Replace(kyoceraMail, "W4X0A20002", "NOSUCH", 1), "job-58", "job-60", 1)
	if err := sendFrom(attackerIP, w.mail.Addr().String(), unknown); err != nil {
		t.Fatal(err)
	}
	// From the watched device at 127.0.0.1, quoting 127.0.0.3's serial.
	if err := sendFrom(deviceIP, w.mail.Addr().String(), kyoceraMail); err != nil {
		t.Fatal(err)
	}
	evs := sink.Snapshot()
	if len(evs) != 2 {
		t.Fatalf("events %+v", evs)
	}
	if !evs[0].Unverified || !strings.HasPrefix(evs[0].Device, "mail:") {
		t.Errorf("relay mail naming no device: %+v", evs[0])
	}
	if evs[1].Unverified || evs[1].Device != "127.0.0.1:9" || evs[1].Detail["matched_by"] != "ip" {
		t.Errorf("device mail quoting another serial: %+v", evs[1])
	}
}

// 16 sessions from one address that say EHLO and then NOOP do not lock
// out a device's mail from another address; the holders beyond the
// per-address cap are answered 421, and the admitted ones are cut at the
// session deadline however busy they keep it.
func TestAttackNOOPHoldersDoNotBlockDevice(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	w := openWatch(t, sink, nil, func(c *WatcherConfig) {
		c.Mail.Allow = []netip.Prefix{netip.PrefixFrom(attackerIP, 32)}
		c.Mail.Timeout, c.Mail.SessionTimeout = time.Second, 3*time.Second
		c.Mail.MaxConns = 16
	})
	addr := w.mail.Addr().String()
	var held []*smtp.Client
	refused := 0
	for range 16 {
		cl, err := smtpFrom(attackerIP, addr)
		if err != nil {
			if !strings.Contains(err.Error(), "421") {
				t.Fatalf("holder: %v", err)
			}
			refused++
			continue
		}
		if err := cl.Hello("holder"); err != nil {
			t.Fatal(err)
		}
		held = append(held, cl)
	}
	if len(held) != 4 || refused != 12 {
		t.Fatalf("%d holders admitted, %d refused: want 4 and 12", len(held), refused)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var cut atomic.Int64
	for _, cl := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
				}
				if err := cl.Noop(); err != nil {
					cut.Add(1)
					return
				}
			}
		}()
	}
	if err := sendFrom(deviceIP, addr, kyoceraMail); err != nil {
		t.Fatalf("device mail while 16 holders try: %v", err)
	}
	if evs := sink.Snapshot(); len(evs) != 1 || evs[0].Device != "127.0.0.1:9" {
		t.Errorf("device mail: %+v", evs)
	}
	// The session deadline (3 s) ends the holders however busy they are.
	deadline := time.After(6 * time.Second)
	for cut.Load() < int64(len(held)) {
		select {
		case <-deadline:
			close(stop)
			wg.Wait()
			t.Fatalf("%d of %d NOOP holders still connected 6 s after the start (session deadline 3 s)", int64(len(held))-cut.Load(), len(held))
		case <-time.After(50 * time.Millisecond):
		}
	}
	close(stop)
	wg.Wait()
	if st := w.mail.Stats(); st.Busy != 12 {
		t.Errorf("stats %+v", st)
	}
}

// A 2 MiB message is refused with 552 and nothing of it is stored (it was
// once answered "250 queued" and silently truncated).
func TestAttackOversizeMail(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	w := openWatch(t, sink, nil, nil)
	big := kyoceraMail + strings.Repeat("Result: Error 1102 padding padding padding padding\r\n", (2<<20)/52)
	err := sendFrom(deviceIP, w.mail.Addr().String(), big)
	if err == nil || !strings.Contains(err.Error(), "552") {
		t.Fatalf("oversize mail: err = %v, want 552", err)
	}
	if evs := sink.Snapshot(); len(evs) != 0 {
		t.Fatalf("oversize mail stored: %+v", evs)
	}
	if st := w.mail.Stats(); st.Oversize != 1 {
		t.Errorf("stats %+v", st)
	}
}

// A real trap sent in the middle of a 50,000-datagram junk flood (half a
// well-formed trap from an address not allowed, a quarter malformed and a
// quarter guessing the community from the device's own address) is stored;
// the junk costs a bounded number of log lines.
func TestAttackTrapDuringJunkFlood(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	logs := &countingHandler{}
	w := openWatch(t, sink, slog.New(logs), nil)
	addr := w.traps.Addr().(*net.UDPAddr)
	from := func(ip netip.Addr) *net.UDPConn {
		c, err := net.DialUDP("udp", &net.UDPAddr{IP: ip.AsSlice()}, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dev, attacker := from(deviceIP), from(attackerIP)
	real := encodeTrapV2(t, "trap-secret", trapVars(oidPrinterV2Alert,
		gosnmp.SnmpPDU{Name: oidPrtAlertDescription + ".1.1", Type: gosnmp.OctetString, Value: []byte(`Send error 1102 \\fs01\scans\alice`)}), false)
	wrongCommunity := encodeTrapV2(t, "guess", trapVars(oidPrinterV2Alert,
		gosnmp.SnmpPDU{Name: oidPrtAlertDescription + ".1.1", Type: gosnmp.OctetString, Value: []byte("Send error 1101")}), false)
	// Paced at 20,000 datagrams a second (a busy LAN host; the reader takes
	// ~40,000 a second here): beyond the reader's rate the kernel drops
	// datagrams before scanwarden sees them, junk and real alike.
	const rate = 20_000
	start := time.Now()
	for i := range 50_000 {
		if i%1000 == 0 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / rate)))
		}
		if i == 25_000 {
			dev.Write(real)
		}
		switch {
		case i%2 == 0:
			attacker.Write(real) // a well-formed trap, right community, wrong address
		case i%4 == 1:
			dev.Write([]byte{0x30, byte(i), 0x02, 0x01, byte(i >> 3)})
		default:
			dev.Write(wrongCommunity)
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("flood still sending after 20 s (%d datagrams)", i)
		}
	}
	// The socket buffer (16 MiB) holds the backlog; give the reader 15 s.
	for wait := time.Now(); len(sink.Snapshot()) == 0 && time.Since(wait) < 15*time.Second; {
		time.Sleep(50 * time.Millisecond)
	}
	if len(sink.Snapshot()) != 1 {
		t.Fatalf("the real trap was not stored: %+v", w.traps.Stats())
	}
	ev := sink.Snapshot()[0]
	if ev.Code != "1102" || ev.Device != "127.0.0.1:9" || ev.Unverified {
		t.Errorf("event %+v", ev)
	}
	st := w.traps.Stats()
	t.Logf("flood of 50,000 in %s: %+v, %d log lines", time.Since(start).Round(time.Millisecond), st, logs.n.Load())
	if st.NotAllowed == 0 || st.Malformed == 0 || st.Refused == 0 {
		t.Errorf("stats %+v", st)
	}
	if n := logs.n.Load(); n > 20 {
		t.Errorf("%d log lines for the junk: want a few (rate-limited)", n)
	}
}

// A trap from an allowed network that is no watched device is stored as
// unverified.
func TestTrapFromAllowedNetworkIsUnverified(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	w := openWatch(t, sink, nil, func(c *WatcherConfig) {
		c.Traps.Allow = []netip.Prefix{netip.PrefixFrom(attackerIP, 32)}
	})
	c, err := net.DialUDP("udp", &net.UDPAddr{IP: attackerIP.AsSlice()}, w.traps.Addr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	trap := encodeTrapV2(t, "trap-secret", trapVars(oidPrinterV2Alert,
		gosnmp.SnmpPDU{Name: oidPrtAlertDescription + ".1.1", Type: gosnmp.OctetString, Value: []byte("Send error 1102")}), false)
	waitFor(t, "the trap", func() bool { c.Write(trap); return len(sink.Snapshot()) == 1 })
	if ev := sink.Snapshot()[0]; !ev.Unverified || ev.Device != "127.0.0.2:161" {
		t.Errorf("event %+v", ev)
	}
}
