package snmp

import (
	"context"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTrapsV3FromSnmptrap sends real SNMPv3 traps with net-snmp's snmptrap
// to a listener that holds one authPriv and one authNoPriv user (and a
// community, so v1/v2c stays taken beside them). Good traps are stored;
// a wrong auth key, a wrong priv key, an unknown user, noAuth, and
// authNoPriv for the authPriv user are refused before anything is stored.
func TestTrapsV3FromSnmptrap(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp): skipping the v3 trap test")
	}
	sink := NewMemorySink(time.Hour, 0)
	cfg := DefaultTrapListenerConfig("127.0.0.1:0", scanwarden.NewSecret("traps"))
	cfg.Users = []V3Auth{
		{User: "kyo", AuthProto: "SHA", AuthPass: scanwarden.NewSecret("auth-pass-kyo"), PrivProto: "AES", PrivPass: scanwarden.NewSecret("priv-pass-kyo")},
		{User: "signer", AuthProto: "SHA256", AuthPass: scanwarden.NewSecret("auth-pass-signer")},
	}
	cfg.AllowFrom = func(a netip.Addr) bool { return a.IsLoopback() }
	l, err := NewTrapListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	addr := l.Addr().String()
	sent := 0
	send := func(sec []string, uptime, text string) {
		t.Helper()
		args := append([]string{"-v", "3", "-e", "0x80001f8880c0ffee00000001"}, sec...)
		args = append(args, addr, uptime, oidPrinterV2Alert, oidPrtAlertDescription+".1."+uptime, "s", text)
		cmd := exec.Command("snmptrap", args...)
		cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH=/nonexistent", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snmptrap %v: %v\n%s", args, err, out)
		}
		sent++
	}
	authPriv := func(user, auth, priv string) []string {
		return []string{"-u", user, "-l", "authPriv", "-a", "SHA", "-A", auth, "-x", "AES", "-X", priv}
	}
	// Stored: authPriv and authNoPriv with the right keys.
	send(authPriv("kyo", "auth-pass-kyo", "priv-pass-kyo"), "5001", `Send error 1103 \\fs01\scans\v3`)
	send([]string{"-u", "signer", "-l", "authNoPriv", "-a", "SHA-256", "-A", "auth-pass-signer"}, "5002", "Send error 1101")
	// Refused: wrong auth key, wrong priv key, unknown user, noAuth,
	// authNoPriv for the authPriv user, authNoPriv with the wrong protocol.
	send(authPriv("kyo", "auth-pass-WRONG", "priv-pass-kyo"), "5003", "Send error 2101")
	send(authPriv("kyo", "auth-pass-kyo", "priv-pass-WRONG"), "5004", "Send error 2102")
	send(authPriv("mallory", "auth-pass-kyo", "priv-pass-kyo"), "5005", "Send error 2103")
	send([]string{"-u", "kyo", "-l", "noAuthNoPriv"}, "5006", "Send error 2104")
	send([]string{"-u", "signer", "-l", "noAuthNoPriv"}, "5007", "Send error 2105")
	send([]string{"-u", "kyo", "-l", "authNoPriv", "-a", "SHA", "-A", "auth-pass-kyo"}, "5008", "Send error 2106")
	send([]string{"-u", "signer", "-l", "authNoPriv", "-a", "MD5", "-A", "auth-pass-signer"}, "5009", "Send error 2107")

	// Every trap handled — refused, or its one event stored: nothing else
	// can follow.
	waitFor(t, "every v3 trap handled", func() bool {
		st := l.Stats()
		return st.NotAllowed+st.Malformed+st.Refused+st.Events >= int64(sent)
	})
	evs := sink.Snapshot()
	got := map[string]Event{}
	for _, ev := range evs {
		got[ev.Code] = ev
		if strings.HasPrefix(ev.Code, "2") {
			t.Errorf("a refused v3 trap was stored: %+v", ev)
		}
	}
	if ev, ok := got["1103"]; !ok || ev.Destination != `\\fs01\scans\v3` || ev.Detail["v3_user"] != "kyo" || ev.Unverified {
		t.Errorf("authPriv trap: %+v (all: %+v)", ev, evs)
	}
	if ev, ok := got["1101"]; !ok || ev.Detail["v3_user"] != "signer" {
		t.Errorf("authNoPriv trap: %+v (all: %+v)", ev, evs)
	}
	if st := l.Stats(); st.Refused != 7 || st.Malformed != 0 || len(evs) != 2 {
		t.Errorf("stats %+v, %d events, want 7 refused, 0 malformed, 2 events", st, len(evs))
	}
}

// TestTrapV3WithoutUsersRefused: a listener holding only a community counts
// every SNMPv3 message refused, and a config with neither is invalid, as
// is a noAuth user.
func TestTrapV3WithoutUsersRefused(t *testing.T) {
	if err := DefaultTrapListenerConfig(":0").Validate(); err == nil {
		t.Error("no community and no user: valid")
	}
	c := DefaultTrapListenerConfig(":0")
	c.Users = []V3Auth{{User: "u"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "noAuth") {
		t.Errorf("noAuth user: %v", err)
	}
	c.Users = []V3Auth{{User: "u", AuthPass: scanwarden.NewSecret("12345678")}}
	if err := c.Validate(); err != nil {
		t.Errorf("authNoPriv user only: %v", err)
	}
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp)")
	}
	l, sink := startTraps(t, "traps")
	cmd := exec.Command("snmptrap", "-v", "3", "-e", "0x80001f8880c0ffee00000002", "-u", "kyo", "-l", "authNoPriv",
		"-a", "SHA", "-A", "auth-pass-kyo", l.Addr().String(), "1", oidPrinterV2Alert, oidPrtAlertDescription+".1.1", "s", "Send error 1103")
	cmd.Env = append(cmd.Environ(), "MIBS=", "SNMPCONFPATH=/nonexistent", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("snmptrap: %v\n%s", err, out)
	}
	waitFor(t, "the v3 trap", func() bool { return l.Stats().Packets >= 1 })
	if st := l.Stats(); st.Refused != 1 || len(sink.Snapshot()) != 0 {
		t.Errorf("stats %+v, events %+v", st, sink.Snapshot())
	}
}
