package daemon

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/store"
)

// The daemon's [snmp] trap_v3_* keys: with only an SNMPv3 trap user
// (authPriv) a good trap from net-snmp's snmptrap is stored; a wrong-key
// one and a noAuth one are not.
func TestServeTakesV3Traps(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		t.Skip("snmptrap not installed (apt-get install snmp): skipping the v3 trap test")
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
	m := &Main{Config: cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
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
		evs, err := st.SNMPEvents(context.Background(), "", time.Time{}, 100)
		if err != nil {
			t.Fatal(err)
		}
		codes = codes[:0]
		for _, ev := range evs {
			codes = append(codes, ev.Code)
		}
		return len(codes) > 0
	})
	time.Sleep(200 * time.Millisecond) // the refused ones came first; nothing else may follow
	evs, _ := st.SNMPEvents(context.Background(), "", time.Time{}, 100)
	if len(evs) != 1 || evs[0].Code != "1103" {
		t.Errorf("stored %+v, want only 1103", evs)
	}
}
