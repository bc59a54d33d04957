package daemon

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// The daemon's [snmp] trap_v3_* keys: with only an SNMPv3 trap user
// (authPriv) a good trap from net-snmp's snmptrap is stored; a wrong-key
// one and a noAuth one are not.
func TestServeTakesV3Traps(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp): skipping the v3 trap test")
	}
	dir := t.TempDir()
	auth, priv := filepath.Join(dir, "trap.auth"), filepath.Join(dir, "trap.priv")
	os.WriteFile(auth, []byte("serve-auth-31f7\n"), 0o600)
	os.WriteFile(priv, []byte("serve-priv-0a2c\n"), 0o600)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	trapAddr := pc.LocalAddr().String()
	pc.Close()
	cfg := testConfig(t, "[snmp]\ntrap_listen = \""+trapAddr+"\"\nallow = [\"127.0.0.0/8\"]\ntrap_v3_user = \"kyotrap\"\n"+
		"trap_v3_auth_file = \""+auth+"\"\ntrap_v3_priv_file = \""+priv+"\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if f := m.Faults(); len(f) != 0 {
		t.Fatalf("faults %+v", f)
	}
	send := func(uptime, text string, sec ...string) {
		t.Helper()
		args := append([]string{"-v", "3", "-e", "0x80001f8880c0ffee000000b2"}, sec...)
		args = append(args, trapAddr, uptime, "1.3.6.1.2.1.43.18.2.0.1", "1.3.6.1.2.1.43.18.1.1.8.1.7", "s", text)
		cmd := exec.Command("snmptrap", args...)
		cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH=/nonexistent", "HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snmptrap: %v\n%s", err, b)
		}
	}
	send("101", "Send error 1101", "-u", "kyotrap", "-l", "authPriv", "-a", "SHA", "-A", "serve-auth-WRONG", "-x", "AES", "-X", "serve-priv-0a2c")
	send("102", "Send error 1105", "-u", "kyotrap", "-l", "noAuthNoPriv")
	send("103", "Send error 1103", "-u", "kyotrap", "-l", "authPriv", "-a", "SHA", "-A", "serve-auth-31f7", "-x", "AES", "-X", "serve-priv-0a2c")
	st, err := store.OpenDir(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var codes []string
	waitUntil(t, 10*time.Second, "the good v3 trap in the store", func() bool {
		evs, err := st.Events().SNMPEvents(context.Background(), "", time.Time{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		codes = codes[:0]
		for _, ev := range evs {
			codes = append(codes, ev.Code)
		}
		return len(codes) > 0
	})
	// Every datagram handled (refused, or its event stored): nothing else
	// can follow.
	waitUntil(t, 10*time.Second, "all three traps handled", func() bool { return trapsHandled(liveTraps(m)) >= 3 })
	if ts := liveTraps(m); ts.Refused != 2 {
		t.Errorf("trap listener %+v, want the wrong-key and the noAuth trap refused", ts)
	}
	evs, _ := st.Events().SNMPEvents(context.Background(), "", time.Time{}, 100)
	if len(evs) != 1 || evs[0].Code != "1103" {
		t.Errorf("stored %+v, want only 1103", evs)
	}
}

// An attacker captures authentic SNMPv3 traps on the LAN and sends them
// after scanwarden restarted: the replay guard's state (store) outlives the
// restart, so a copy of a trap taken before it, and a trap held back
// (captured, never delivered) from further back than the 150 s window,
// are refused; the engine's next trap is taken. Real net-snmp snmptrap
// traps, captured into a socket of the test.
func TestAttackTrapV3ReplayAcrossRestart(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp): skipping the v3 replay test")
	}
	dir := t.TempDir()
	auth, priv := filepath.Join(dir, "trap.auth"), filepath.Join(dir, "trap.priv")
	os.WriteFile(auth, []byte("serve-auth-31f7\n"), 0o600)
	os.WriteFile(priv, []byte("serve-priv-0a2c\n"), 0o600)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	trapAddr := pc.LocalAddr().String()
	pc.Close()
	cfg := testConfig(t, "[snmp]\ntrap_listen = \""+trapAddr+"\"\nallow = [\"127.0.0.0/8\"]\ntrap_v3_user = \"kyotrap\"\n"+
		"trap_v3_auth_file = \""+auth+"\"\ntrap_v3_priv_file = \""+priv+"\"\n")
	// capture runs snmptrap into a socket of ours: what the attacker holds.
	capture := func(engineTime int, uptime, text string) []byte {
		t.Helper()
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		args := []string{"-v", "3", "-e", "0x80001f8880c0ffee000000b3", "-Z", "3," + strconv.Itoa(engineTime),
			"-u", "kyotrap", "-l", "authPriv", "-a", "SHA", "-A", "serve-auth-31f7", "-x", "AES", "-X", "serve-priv-0a2c",
			pc.LocalAddr().String(), uptime, "1.3.6.1.2.1.43.18.2.0.1", "1.3.6.1.2.1.43.18.1.1.8.1.7", "s", text}
		cmd := exec.Command("snmptrap", args...)
		cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH=/nonexistent", "HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snmptrap: %v\n%s", err, b)
		}
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 65536)
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		return buf[:n]
	}
	held := capture(700, "100", "Send error 1101")    // captured, never delivered, 300 s behind
	first := capture(1000, "101", "Send error 1103")  // delivered before the restart
	second := capture(1001, "102", "Send error 1103") // delivered before the restart
	next := capture(1010, "103", "Send error 1105")   // the engine's next trap, after the restart

	traps := func(m *Main) snmp.TrapStats {
		if m.live.get() == nil || m.live.get().watch.watcher() == nil {
			t.Fatal("no trap listener")
		}
		return liveTraps(m)
	}
	open := func() *Main {
		m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
		if err := m.Open(context.Background()); err != nil {
			t.Fatal(err)
		}
		if f := m.Faults(); len(f) != 0 {
			t.Fatalf("faults %+v", f)
		}
		return m
	}
	send := func(m *Main, b []byte) {
		t.Helper()
		want := traps(m).Packets + 1
		c, err := net.Dial("udp", trapAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, 5*time.Second, "the listener read the trap", func() bool { return traps(m).Packets >= want })
	}

	m := open()
	send(m, first)
	send(m, second)
	// Packets counts a trap when read; its event is stored after that.
	waitUntil(t, 5*time.Second, "both traps stored", func() bool { return traps(m).Events >= 2 })
	if st := traps(m); st.Events != 2 || st.Replayed != 0 {
		t.Fatalf("before the restart: %+v", st)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m = open()
	defer m.Close()
	// The held-back trap first: without the saved state nothing would say it
	// is old, and it would be stored as a new 1101.
	for _, b := range [][]byte{held, first, second} {
		send(m, b)
	}
	waitUntil(t, 5*time.Second, "the three replays handled", func() bool { return trapsHandled(traps(m)) >= 3 })
	if st := traps(m); st.Events != 0 || st.Replayed != 3 {
		t.Errorf("after the restart, the replays: %+v; want 3 replayed, 0 events", st)
	}
	send(m, next)
	waitUntil(t, 5*time.Second, "the engine's next trap stored", func() bool { return traps(m).NewEvents == 1 })
	evs, err := m.Store().Events().SNMPEvents(context.Background(), "", time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, ev := range evs {
		codes = append(codes, ev.Code)
	}
	slices.Sort(codes)
	if !slices.Equal(codes, []string{"1103", "1103", "1105"}) {
		t.Errorf("stored codes %v, want 1103 twice (before the restart) and 1105", codes)
	}
}

// liveTraps is the running trap listener's counters (zero: none).
func liveTraps(m *Main) snmp.TrapStats {
	if p := m.live.get(); p != nil {
		if w := p.watch.watcher(); w != nil && w.Stats().Traps != nil {
			return *w.Stats().Traps
		}
	}
	return snmp.TrapStats{}
}

// trapsHandled counts the datagrams the listener is done with: not
// allowed, malformed, refused, or their event stored (one each here).
func trapsHandled(s snmp.TrapStats) int64 { return s.NotAllowed + s.Malformed + s.Refused + s.Events }
