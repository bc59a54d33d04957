package snmp

import (
	"context"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"net"
	"net/netip"
	"net/smtp"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/scanwarden/scanwarden/testlab"
)

func startTraps(t *testing.T, communities ...string) (*TrapListener, *MemorySink) {
	t.Helper()
	sink := NewMemorySink(time.Hour, 0)
	var cs []scanwarden.Secret
	for _, c := range communities {
		cs = append(cs, scanwarden.NewSecret(c))
	}
	cfg := DefaultTrapListenerConfig("127.0.0.1:0", cs...)
	cfg.AllowFrom = func(a netip.Addr) bool { return a.IsLoopback() } // loopback plays the watched device
	l, err := NewTrapListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(sink, nil, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, sink
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestTrapsFromSnmptrap sends real traps with net-snmp's snmptrap and
// snmpinform to the listener on loopback.
func TestTrapsFromSnmptrap(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp): skipping the trap test")
	}
	l, sink := startTraps(t, "traps")
	addr := l.Addr().String()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(cmd.Environ(), "MIBS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	// printerV2Alert carrying a Kyocera send error in a text variable.
	run("snmptrap", "-v2c", "-c", "traps", addr, "4242", oidPrinterV2Alert,
		oidPrtAlertSeverity+".1.7", "i", "4", oidPrtAlertCode+".1.7", "i", "1",
		oidPrtAlertDescription+".1.7", "s", `Send error 1103 \\fs01\scans\finance`)
	// printerV2Alert about toner: kept raw, no code (prtAlertCode 1101 is toner).
	run("snmptrap", "-v2c", "-c", "traps", addr, "4243", oidPrinterV2Alert,
		oidPrtAlertSeverity+".1.8", "i", "3", oidPrtAlertCode+".1.8", "i", "1101")
	// An unknown enterprise v1 trap: kept raw.
	run("snmptrap", "-v1", "-c", "traps", addr, "1.3.6.1.4.1.1347.41", "127.0.0.1", "6", "17", "99",
		"1.3.6.1.4.1.1347.43.99.1", "s", "hello")
	// An inform: snmpinform exits 0 only when the listener answers.
	run("snmpinform", "-v2c", "-c", "traps", "-t", "2", "-r", "0", addr, "4244", "1.3.6.1.4.1.1347.0.1",
		"1.3.6.1.4.1.1347.43.99.2", "s", "Error code: 2102 (send)")
	// Wrong community: refused, no event.
	run("snmptrap", "-v2c", "-c", "other", addr, "4245", oidPrinterV2Alert, oidPrtAlertDescription+".1.9", "s", "Send error 1101")

	waitFor(t, "5 traps", func() bool { return l.Stats().Packets >= 5 })
	evs := sink.Snapshot()
	got := map[string]Event{}
	for _, ev := range evs {
		got[ev.Code+"|"+ev.Detail["trap_oid"]] = ev
	}
	if ev, ok := got["1103|"+oidPrinterV2Alert]; !ok || ev.Destination != `\\fs01\scans\finance` || ev.Device != "127.0.0.1:161" || ev.Source != SourceTrap {
		t.Errorf("printerV2Alert 1103: %+v (all: %+v)", ev, evs)
	}
	if ev, ok := got["|"+oidPrinterV2Alert]; !ok || ev.Detail["prt_alert_code_name"] != "markerTonerEmpty" {
		t.Errorf("raw toner alert: %+v", ev)
	}
	if _, ok := got["|1.3.6.1.4.1.1347.41.0.17"]; !ok {
		t.Errorf("raw v1 trap missing: %+v", evs)
	}
	if _, ok := got["2102|1.3.6.1.4.1.1347.0.1"]; !ok {
		t.Errorf("inform 2102 missing: %+v", evs)
	}
	if st := l.Stats(); st.Refused != 1 || len(evs) != 4 {
		t.Errorf("stats %+v, %d events", st, len(evs))
	}
}

// TestTrapListenerSurvivesGarbage throws malformed and truncated packets
// at the socket and then checks a good trap still gets through.
func TestTrapListenerSurvivesGarbage(t *testing.T) {
	l, sink := startTraps(t, "public")
	c, err := net.Dial("udp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	good := encodeTrapV2(t, "public", trapVars(oidPrinterV2Alert,
		gosnmp.SnmpPDU{Name: oidPrtAlertDescription + ".1.1", Type: gosnmp.OctetString, Value: []byte("Send error 1102")}), false)
	junk := [][]byte{nil, {0x30}, {0x30, 0x82, 0xff, 0xff}, good[:len(good)/2], good[:len(good)-1],
		[]byte("GET / HTTP/1.0\r\n\r\n"), make([]byte, 9000)}
	for i := 0; i < 1000; i++ { // bounded flood
		junk = append(junk, []byte{0x30, byte(i), 0x02, 0x01, byte(i >> 2)})
	}
	for _, j := range junk {
		c.Write(j)
	}
	// The flood may overrun the socket buffer (UDP drops, as on a LAN):
	// resend the good trap until it is seen; duplicates are de-duplicated.
	waitFor(t, "the good trap", func() bool { c.Write(good); return len(sink.Snapshot()) == 1 })
	if st := l.Stats(); st.Malformed < 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestDecodeTrapErrorsNamePeer(t *testing.T) {
	peer := netip.MustParseAddrPort("127.0.0.9:5000")
	for name, b := range map[string][]byte{
		"empty":       nil,
		"truncated":   {0x30, 0x10, 0x02},
		"not a trap":  encodeGet(t),
		"no trap oid": encodeTrapV2(t, "public", []gosnmp.SnmpPDU{{Name: "." + oidSysUpTime, Type: gosnmp.TimeTicks, Value: uint32(1)}}, false),
	} {
		_, err := DecodeTrap(b, peer)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.9:5000") {
			t.Errorf("%s: err = %v, want it to name the peer", name, err)
		}
	}
}

func encodeGet(t *testing.T) []byte {
	p := &gosnmp.SnmpPacket{Version: gosnmp.Version2c, Community: "public", PDUType: gosnmp.GetRequest, RequestID: 1,
		Variables: []gosnmp.SnmpPDU{{Name: "." + oidSysName, Type: gosnmp.Null}}}
	b, err := p.MarshalMsg()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const kyoceraMail = "From: \"MFP02\" <mfp02@kyolab.test>\r\n" +
	"To: scanwarden@kyolab.test\r\n" +
	"Subject: Job End Report\r\n" +
	"Message-ID: <job-58@mfp02.kyolab.test>\r\n" +
	"Date: Sat, 01 Mar 2025 10:15:00 +0100\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=\"b1\"\r\n" +
	"\r\n" +
	"--b1\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"Model: TASKalfa 3253ci\r\n" +
	"Serial Number: W4X0A20002\r\n" +
	"Job No.: 000058\r\n" +
	"Job Type: Send (SMB)\r\n" +
	"Destination: \\\\fs01.kyolab.test\\scans\\alice\r\n" +
	"Result: Error 1102\r\n" +
	"--b1\r\n" +
	"Content-Type: text/html\r\n" +
	"\r\n" +
	"<p>Error 2101</p>\r\n" +
	"--b1--\r\n"

// TestMailOverSMTP sends a job-log e-mail over SMTP on loopback, an allowed
// relay; the device is matched by the serial in the body, and a mail that
// names no known device is kept unverified.
func TestMailOverSMTP(t *testing.T) {
	sink := NewMemorySink(time.Hour, 0)
	idx := NewDeviceIndex()
	idx.Add(Inventory{Address: "10.77.0.40:161", Serial: "W4X0A20002"})
	cfg := DefaultMailListenerConfig("127.0.0.1:0")
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")} // loopback plays the mail relay
	m, err := NewMailListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(sink, idx, nil, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	addr := m.Addr().String()
	if err := smtp.SendMail(addr, nil, "mfp02@kyolab.test", []string{"scanwarden@kyolab.test"}, []byte(kyoceraMail)); err != nil {
		t.Fatal(err)
	}
	evs := sink.Snapshot()
	if len(evs) != 1 {
		t.Fatalf("events: %+v", evs)
	}
	ev := evs[0]
	if ev.Code != "1102" || ev.Device != "10.77.0.40:161" || ev.Source != SourceMail || ev.Destination != `\\fs01.kyolab.test\scans\alice` || ev.Detail["matched_by"] != "serial" {
		t.Errorf("event %+v", ev)
	}
	// The same mail again is a duplicate (same Message-ID).
	smtp.SendMail(addr, nil, "mfp02@kyolab.test", []string{"x@kyolab.test"}, []byte(kyoceraMail))
	if len(sink.Snapshot()) != 1 || sink.Dups != 1 {
		t.Errorf("duplicate mail: %d events, %d dups", len(sink.Snapshot()), sink.Dups)
	}
	// A broken e-mail is refused with 554, and the server goes on.
	err = smtp.SendMail(addr, nil, "mfp02@kyolab.test", []string{"x@kyolab.test"},
		[]byte("From: <mfp02@kyolab.test>\r\nContent-Type: multipart/mixed\r\n\r\nno boundary\r\n"))
	if err == nil || !strings.Contains(err.Error(), "554") {
		t.Errorf("broken mail: err = %v, want 554", err)
	}
	// An unknown sender is kept under its address.
	other := strings.Replace(strings.Replace(kyoceraMail, "W4X0A20002", "NOPE", 1), "job-58", "job-59", 1)
	if err := smtp.SendMail(addr, nil, "mfp09@kyolab.test", []string{"x@kyolab.test"}, []byte(other)); err != nil {
		t.Fatal(err)
	}
	evs = sink.Snapshot()
	if len(evs) != 2 || evs[1].Device != "mail:mfp02@kyolab.test" || !evs[1].Unverified || evs[0].Unverified {
		t.Errorf("unmatched: %+v", evs)
	}
	if st := m.Stats(); st.Messages != 4 || st.Malformed != 1 || st.Unmatched != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestParseMailErrorsNameField(t *testing.T) {
	for field, msg := range map[string]string{
		"headers":      "not a mail",
		"From header":  "From: <<<\r\n\r\nbody",
		"Content-Type": "From: a@b.c\r\nContent-Type: ;;;\r\n\r\nbody",
		"part 1":       "From: a@b.c\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!!\r\n--x--\r\n",
	} {
		_, err := ParseMail(strings.NewReader(msg))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
	pm, err := ParseMail(strings.NewReader("From: a@b.c\r\nSubject: =?utf-8?q?Send_error_1101?=\r\n\r\n"))
	if err != nil || len(MailEvents(pm, "d", DefaultRules(DefaultCodeBook()), time.Now())) != 1 {
		t.Errorf("encoded subject: %+v %v", pm, err)
	}
	_ = fmt.Sprint
}
