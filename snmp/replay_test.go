package snmp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
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
		t.Skip("snmptrap not installed (apt-get install snmp)")
	}
	sink := NewMemorySink(time.Hour, 0)
	cfg := DefaultTrapListenerConfig("127.0.0.1:0")
	cfg.Users = []V3Auth{{User: "signer", AuthProto: "SHA256", AuthPass: scanwarden.NewSecret("auth-pass-signer")}}
	cfg.AllowFrom = func(a netip.Addr) bool { return a.IsLoopback() }
	l, err := NewTrapListener(cfg, DefaultRules(DefaultCodeBook()), sink, nil)
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
		waitFor(t, "the listener read it", func() bool { return l.Stats().Packets >= int64(sent) })
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

	waitFor(t, "4 events", func() bool { return len(sink.Snapshot()) >= 4 })
	time.Sleep(100 * time.Millisecond)
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
		if ok, why := g.check(usmStamp{engineID: fmt.Sprint("e", i), boots: 1, time: 1, digest: fmt.Sprint("d", i)}, now.Add(time.Duration(i))); !ok {
			t.Fatalf("engine %d: %s", i, why)
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
	if ok, _ := g.check(usmStamp{engineID: "max", boots: 1<<31 - 1, digest: "m"}, now); ok {
		t.Error("boots 2^31-1 taken")
	}
}
