package snmp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// captureTrap runs net-snmp's snmptrap as the MFP would send an authNoPriv
// SHA-256 trap, stamped with engine boots/time (-Z), into a UDP socket of
// ours instead of the listener: what an attacker on the path captures.
func captureTrap(t *testing.T, boots, engineTime int, uptime, text string) []byte {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	args := []string{"-v", "3", "-e", "0x80001f8880c0ffee000000aa", "-Z", fmt.Sprintf("%d,%d", boots, engineTime),
		"-u", "signer", "-l", "authNoPriv", "-a", "SHA-256", "-A", "auth-pass-signer",
		pc.LocalAddr().String(), uptime, oidPrinterV2Alert, oidPrtAlertDescription + ".1." + uptime, "s", text}
	cmd := exec.Command("snmptrap", args...)
	cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH=/nonexistent", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("snmptrap %v: %v\n%s", args, err, out)
	}
	pc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65536)
	n, _, err := pc.ReadFrom(buf)
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return buf[:n]
}

// Authentic SNMPv3 traps captured off the wire and sent again: a copy, one
// from an earlier boot, one behind the sender's clock by more than 150 s, and
// one captured and held back while time passed are refused; traps that are
// new in the sender's clock (and after its reboot) are taken.
func TestAttackTrapV3Replay(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp)")
	}
	sink := NewMemorySink(time.Hour, 0)
	cfg := DefaultTrapListenerConfig("127.0.0.1:0")
	cfg.Users = []V3Auth{{User: "signer", AuthProto: "SHA256", AuthPass: scanwarden.NewSecret("auth-pass-signer")}}
	cfg.AllowFrom = func(a netip.Addr) bool { return a.IsLoopback() }
	l, err := NewTrapListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	if err := l.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conn, err := net.Dial("udp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sent := 0
	send := func(b []byte) {
		t.Helper()
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
		sent++
		// handled (refused, or stored) before the clock moves on: Packets
		// counts it before the guard sees it
		waitFor(t, "the listener handled it", func() bool { st := l.Stats(); return st.Refused+st.Events >= int64(sent) })
	}

	// Captured traffic of engine boots 5: engine times 10,000 … 10,810.
	early := captureTrap(t, 5, 10000, "6001", "Send error 2101")
	first := captureTrap(t, 5, 10500, "6002", "Send error 1101")
	oldBoot := captureTrap(t, 4, 20000, "6003", "Send error 2102")
	later := captureTrap(t, 5, 10800, "6004", "Send error 1102")
	heldBack := captureTrap(t, 5, 10810, "6005", "Send error 2103")

	send(first)   // taken: the engine's first message
	send(first)   // an exact copy: refused
	send(early)   // 500 s behind what the engine already said: refused
	send(oldBoot) // an earlier boot: refused
	send(later)   // newer: taken
	advance(5 * time.Minute)
	send(heldBack)                                            // captured at 10,810, sent 300 s later: refused
	send(captureTrap(t, 5, 11110, "6006", "Send error 1103")) // the engine's clock moved on too: taken
	send(captureTrap(t, 6, 40, "6007", "Send error 1104"))    // the engine rebooted: taken
	send(later)                                               // from before the reboot: refused

	// send waited for each trap to be refused or stored: nothing can follow.
	var codes []string
	for _, ev := range sink.Snapshot() {
		codes = append(codes, ev.Code)
		if strings.HasPrefix(ev.Code, "2") {
			t.Errorf("a replayed trap was stored: %+v", ev)
		}
	}
	st := l.Stats()
	t.Logf("stored %v; stats %+v", codes, st)
	if len(codes) != 4 || st.Replayed != 5 || st.Refused != 5 {
		t.Errorf("want 4 events (1101-1104) and 5 refused as replays; got %v, %+v", codes, st)
	}
}

func TestReplayGuardBounds(t *testing.T) {
	g := newReplayGuard()
	now := time.Unix(1e9, 0)
	for i := range maxEngines + 10 {
		if v := g.check(usmStamp{engineID: fmt.Sprint("e", i), boots: 1, time: 1, digest: fmt.Sprint("d", i)}, now.Add(time.Duration(i))); !v.ok {
			t.Fatalf("engine %d: %s", i, v.why)
		}
	}
	if len(g.engines) > maxEngines || len(g.seen) > maxDigests {
		t.Fatalf("%d engines, %d digests", len(g.engines), len(g.seen))
	}
	for i := range maxDigests + 10 {
		g.check(usmStamp{engineID: "one", boots: 1, time: uint32(i), digest: fmt.Sprint("x", i)}, now)
	}
	if len(g.seen) > maxDigests {
		t.Fatalf("%d digests kept", len(g.seen))
	}
	if g.check(usmStamp{engineID: "max", boots: 1<<31 - 1, digest: "m"}, now).ok {
		t.Error("boots 2^31-1 taken")
	}
}

// A full digest map is pruned to 3/4 of its bound, the oldest first (all
// taken within the window): the newest stay, and the next prune is
// maxDigests-keepDigests digests away.
func TestReplayGuardPrunesOldestFirst(t *testing.T) {
	g := newReplayGuard()
	t0 := time.Unix(1e9, 0)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) } // all within 10 s
	for i := range maxDigests {
		if v := g.check(usmStamp{engineID: "e", boots: 1, time: 100, digest: fmt.Sprint("d", i)}, at(i)); !v.ok {
			t.Fatalf("digest %d: %s", i, v.why)
		}
	}
	if len(g.seen) != maxDigests {
		t.Fatalf("%d digests before the prune", len(g.seen))
	}
	g.check(usmStamp{engineID: "e", boots: 1, time: 100, digest: "next"}, at(maxDigests))
	if len(g.seen) != keepDigests+1 {
		t.Fatalf("%d digests after the prune, want %d", len(g.seen), keepDigests+1)
	}
	for i := range maxDigests {
		_, kept := g.seen[seenKey{"e", fmt.Sprint("d", i)}]
		if want := i >= maxDigests-keepDigests; kept != want {
			t.Fatalf("digest %d of %d kept: %v", i, maxDigests, kept)
		}
	}
	// the newest copies are still refused
	if v := g.check(usmStamp{engineID: "e", boots: 1, time: 100, digest: fmt.Sprint("d", maxDigests-1)}, at(maxDigests+1)); v.ok {
		t.Error("a copy of the newest digest taken after the prune")
	}
	for i := range maxDigests - keepDigests - 2 {
		g.check(usmStamp{engineID: "e", boots: 1, time: 100, digest: fmt.Sprint("more", i)}, at(maxDigests+2+i))
	}
	if len(g.seen) != maxDigests-1 {
		t.Fatalf("%d digests: pruned again before full", len(g.seen))
	}
}

// A loaded notion is re-based to the time it is loaded: the saved
// wall-clock time is not trusted. (b) saved, then loaded with the box's
// clock 10 minutes ahead (no RTC, NTP not yet synced); (c) taken while the
// clock was an hour behind, saved, loaded after NTP stepped it: the
// engine's next traps are taken, a capture from beyond the window before
// its latest time and a copy of a saved digest are still refused.
func TestReplayGuardLoadRebases(t *testing.T) {
	saved := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		load time.Time // the box's clock at load
	}{
		{"clock ahead at load", saved.Add(10 * time.Minute)},
		{"clock behind when saved", saved.Add(time.Hour)},
		{"clock behind at load", saved.Add(-time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newReplayGuard()
			g.load(ReplayState{
				Engines: []ReplayEngine{{EngineID: []byte("mfp"), Boots: 3, Time: 5000, At: saved}},
				Seen:    []ReplaySeen{{EngineID: []byte("mfp"), Digest: []byte("taken"), At: saved.Add(-time.Second)}},
			}, tc.load)
			now := tc.load.Add(20 * time.Second)
			if v := g.check(usmStamp{engineID: "mfp", boots: 3, time: 4999, digest: "taken"}, now); v.ok {
				t.Error("a copy of a saved digest taken")
			}
			if v := g.check(usmStamp{engineID: "mfp", boots: 3, time: 4800, digest: "held back"}, now); v.ok {
				t.Error("a capture 200 s behind the saved time taken")
			}
			if v := g.check(usmStamp{engineID: "mfp", boots: 3, time: 5020, digest: "next"}, now); !v.ok {
				t.Errorf("the engine's next trap refused: %s", v.why)
			}
		})
	}
}

// An engine that restarts without incrementing its boots (same boots,
// engine time from 0) is refused as too old at first; after rebaseAfter
// such traps in a row whose engine time advances with ours, its notion is
// re-based (reported) and its traps are taken again. Captures sent faster
// or slower than they were made, and one capture sent again and again,
// never re-base it.
func TestReplayGuardRebasesStuckEngine(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	fresh := func() *replayGuard {
		g := newReplayGuard()
		if v := g.check(usmStamp{engineID: "mfp", boots: 7, time: 86400, digest: "before"}, t0); !v.ok {
			t.Fatal(v.why)
		}
		return g
	}
	reboot := t0.Add(time.Hour) // the engine restarts, boots still 7
	trap := func(g *replayGuard, engineTime int, real time.Duration, digest string) verdict {
		return g.check(usmStamp{engineID: "mfp", boots: 7, time: uint32(engineTime), digest: digest}, reboot.Add(real))
	}

	t.Run("restarted engine", func(t *testing.T) {
		g := fresh()
		for i, et := range []int{30, 95, 160} {
			v := trap(g, et, time.Duration(et)*time.Second+300*time.Millisecond, fmt.Sprint("after", i))
			if last := i == rebaseAfter-1; v.ok != last || v.rebased != last {
				t.Fatalf("trap %d after the restart: %+v", i, v)
			}
			if i == rebaseAfter-1 && (v.was.boots != 7 || v.was.time < 86400+3600) {
				t.Errorf("the notion given up: %+v", v.was)
			}
		}
		if v := trap(g, 200, 200*time.Second, "later"); !v.ok || v.rebased {
			t.Errorf("the next trap after the re-base: %+v", v)
		}
		if v := trap(g, 20, 200*time.Second, "old"); v.ok {
			t.Error("a trap 180 s behind the re-based notion taken")
		}
	})
	t.Run("replayed captures", func(t *testing.T) {
		for name, sends := range map[string][][2]int{ // engine time, seconds after the reboot
			"faster than made": {{1000, 10}, {1600, 20}, {2200, 30}, {2800, 40}, {3400, 50}},
			"slower than made": {{1000, 10}, {1010, 100}, {1020, 200}, {1030, 300}, {1040, 400}},
			"one capture":      {{1000, 10}, {1000, 10}, {1000, 11}, {1000, 12}, {1000, 13}},
			"out of order":     {{1000, 10}, {990, 10}, {1000, 20}, {990, 20}, {1000, 30}},
		} {
			g := fresh()
			for i, s := range sends {
				if v := trap(g, s[0], time.Duration(s[1])*time.Second, fmt.Sprint(i)); v.ok || v.rebased {
					t.Errorf("%s: send %d %v: %+v", name, i, s, v)
				}
			}
		}
	})
	t.Run("a run broken by a trap taken", func(t *testing.T) {
		g := fresh()
		trap(g, 30, 30*time.Second, "a")
		trap(g, 60, 60*time.Second, "b")
		if v := g.check(usmStamp{engineID: "mfp", boots: 8, time: 5, digest: "boots 8"}, reboot.Add(61*time.Second)); !v.ok {
			t.Fatal(v.why)
		}
		if v := trap(g, 90, 90*time.Second, "c"); v.ok || v.rebased {
			t.Errorf("an earlier boot's trap after the run was broken: %+v", v)
		}
	})
}

// syncBuffer is a log sink safe for the listener's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// An MFP that restarts without incrementing snmpEngineBoots: real
// snmptrap traps with the same boots and an engine time from 0. Its first
// traps are refused as too old; the third in a row, its clock advancing
// with ours, re-bases the notion: taken, an ERROR naming the engine, and
// TrapStats.Rebased counts it. The traps after are taken.
func TestTrapV3EngineRestartedWithSameBoots(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp)")
	}
	var logs syncBuffer
	sink := NewMemorySink(time.Hour, 0)
	cfg := DefaultTrapListenerConfig("127.0.0.1:0")
	cfg.Users = []V3Auth{{User: "signer", AuthProto: "SHA256", AuthPass: scanwarden.NewSecret("auth-pass-signer")}}
	cfg.AllowFrom = func(a netip.Addr) bool { return a.IsLoopback() }
	l, err := NewTrapListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	l.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	if err := l.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	conn, err := net.Dial("udp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sent := 0
	send := func(b []byte) {
		t.Helper()
		if _, err := conn.Write(b); err != nil {
			t.Fatal(err)
		}
		sent++
		// handled (refused, or stored) before the clock moves on
		waitFor(t, "the listener handled it", func() bool { st := l.Stats(); return st.Refused+st.Events >= int64(sent) })
	}
	send(captureTrap(t, 5, 90000, "7001", "Send error 1101")) // a day up
	advance(time.Hour)                                        // it restarts, boots still 5
	for i, et := range []int{20, 80, 140, 200} {
		advance(60 * time.Second)
		send(captureTrap(t, 5, et, fmt.Sprint(7002+i), fmt.Sprint("Send error ", 1102+i)))
	}
	// send waited for each trap to be refused or stored: nothing can follow.
	var codes []string
	for _, ev := range sink.Snapshot() {
		codes = append(codes, ev.Code)
	}
	st := l.Stats()
	t.Logf("stored %v; stats %+v", codes, st)
	if !slices.Equal(codes, []string{"1101", "1104", "1105"}) || st.Replayed != 2 || st.Rebased != 1 {
		t.Errorf("want 1101, 1104 (re-based), 1105 stored, 2 refused, 1 re-base; got %v, %+v", codes, st)
	}
	line := ""
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "level=ERROR") {
			line = l
		}
	}
	if !strings.Contains(line, "80001f8880c0ffee000000aa") || !strings.Contains(line, "snmpEngineBoots") {
		t.Errorf("no ERROR naming the engine; log:\n%s", logs.String())
	}
	t.Logf("%s", line)
}
