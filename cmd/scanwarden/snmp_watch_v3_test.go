package main

import (
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/testlab"
)

// A watch with only an SNMPv3 trap user (auth passphrase from a file, priv
// from the environment) stores a good authPriv trap from net-snmp's
// snmptrap and refuses a wrong-key one and a noAuth one before anything
// is stored.
func TestSNMPWatchV3Traps(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp): skipping the v3 trap watch test")
	}
	addr, _ := simAddr(t)
	comm := writeFile(t, "community", "kyocera-job1102\n")
	auth := writeFile(t, "trap-v3-auth", "trap-auth-9c41\n")
	state := t.TempDir()
	r := startWatchEnv(t, map[string]string{trapV3PrivEnv: "trap-priv-77e0"}, addr, "--community-file", comm,
		"--state-dir", state, "--interval", "1s", "--json", "--trap-listen", "127.0.0.1:0",
		"--trap-v3-user", "kyotrap", "--trap-v3-auth-file", auth, "--trap-v3-auth-proto", "SHA256")
	var start map[string]any
	waitUntil(t, 10*time.Second, "the first cycle", func() bool {
		lines := jsonLines(t, r.stdout.String())
		if s := ofType(lines, "start"); len(s) == 1 {
			start = s[0]
		}
		return len(ofType(lines, "cycle")) > 0
	})
	trapAddr, _ := start["trap_listen"].(string)
	if users, _ := start["trap_v3_users"].([]any); !strings.HasPrefix(trapAddr, "127.0.0.1:") || start["trap_communities"] != 0.0 ||
		len(users) != 1 || users[0] != "kyotrap" {
		t.Fatalf("start %v", start)
	}
	snmptrap := func(uptime, text string, sec ...string) {
		t.Helper()
		args := append([]string{"-v", "3", "-e", "0x80001f8880c0ffee000000a1"}, sec...)
		args = append(args, trapAddr, uptime, "1.3.6.1.2.1.43.18.2.0.1", "1.3.6.1.2.1.43.18.1.1.8.1.7", "s", text)
		cmd := exec.Command("snmptrap", args...)
		cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH=/nonexistent", "HOME="+t.TempDir())
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snmptrap: %v\n%s", err, b)
		}
	}
	snmptrap("4241", `Send error 1101 \\fs01\scans\wrongkey`,
		"-u", "kyotrap", "-l", "authPriv", "-a", "SHA-256", "-A", "trap-auth-WRONG", "-x", "AES", "-X", "trap-priv-77e0")
	snmptrap("4242", `Send error 1105 \\fs01\scans\noauth`, "-u", "kyotrap", "-l", "noAuthNoPriv")
	snmptrap("4243", `Send error 1103 \\fs01\scans\finance`,
		"-u", "kyotrap", "-l", "authPriv", "-a", "SHA-256", "-A", "trap-auth-9c41", "-x", "AES", "-X", "trap-priv-77e0")
	var trapEv map[string]any
	waitUntil(t, 10*time.Second, "the v3 trap as an event, and a cycle that counted all three", func() bool {
		lines := jsonLines(t, r.stdout.String())
		for _, ev := range ofType(lines, "event") {
			if ev["source"] == "trap" {
				trapEv = ev
			}
		}
		cycles := ofType(lines, "cycle")
		traps, _ := cycles[len(cycles)-1]["traps"].(map[string]any)
		return trapEv != nil && traps != nil && traps["packets"] == 3.0
	})
	r.cancel()
	if code := r.wait(t, 10*time.Second); code != exitOK {
		t.Errorf("exit %d after cancel\n%s", code, r.stderr.String())
	}
	lines := jsonLines(t, r.stdout.String())
	cycles := ofType(lines, "cycle")
	if traps := cycles[len(cycles)-1]["traps"].(map[string]any); traps["refused"] != 2.0 || traps["new_events"] != 1.0 {
		t.Errorf("trap figures %v", traps)
	}
	if trapEv["code"] != "1103" || trapEv["device"] != addr || trapEv["destination"] != `\\fs01\scans\finance` {
		t.Errorf("trap event %v", trapEv)
	}
	if out := r.stdout.String() + r.stderr.String(); strings.Contains(out, "trap-auth") || strings.Contains(out, "trap-priv") {
		t.Error("a v3 passphrase was printed")
	}
	evs, _ := storedEvents(t, state)
	for _, ev := range evs {
		if ev.Source == snmp.SourceTrap && ev.Code != "1103" {
			t.Errorf("refused v3 trap stored: %+v", ev)
		}
	}
	if c, err := net.ListenPacket("udp", trapAddr); err != nil {
		t.Errorf("trap port still held: %v", err)
	} else {
		c.Close()
	}
}
