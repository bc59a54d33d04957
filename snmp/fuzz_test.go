package snmp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"github.com/scanwarden/scanwarden"
)

// FuzzDecodeTrap feeds arbitrary datagrams to the trap path (decode,
// community check, events, sink): it must never panic, and whatever it
// accepts must be bounded data.
func FuzzDecodeTrap(f *testing.F) {
	good := encodeTrapV2(f, "public", trapVars(oidPrinterV2Alert,
		gosnmp.SnmpPDU{Name: oidPrtAlertSeverity + ".1.1", Type: gosnmp.Integer, Value: 4},
		gosnmp.SnmpPDU{Name: oidPrtAlertCode + ".1.1", Type: gosnmp.Integer, Value: 1101},
		gosnmp.SnmpPDU{Name: oidPrtAlertDescription + ".1.1", Type: gosnmp.OctetString, Value: []byte("Send error 1102 \\\\fs\\s")}), false)
	inform := encodeTrapV2(f, "public", trapVars("1.3.6.1.4.1.1347.0.1",
		gosnmp.SnmpPDU{Name: "1.3.6.1.4.1.1347.43.1", Type: gosnmp.OctetString, Value: []byte("<script>\x00\x1b")}), true)
	v1 := &gosnmp.SnmpPacket{Version: gosnmp.Version1, Community: "public", PDUType: gosnmp.Trap,
		SnmpTrap: gosnmp.SnmpTrap{Enterprise: ".1.3.6.1.4.1.1347.41", AgentAddress: "127.0.0.1", GenericTrap: 6, SpecificTrap: 17, Timestamp: 99,
			Variables: []gosnmp.SnmpPDU{{Name: ".1.3.6.1.4.1.1347.43.99.1", Type: gosnmp.OctetString, Value: []byte("Error 2101")}}}}
	v1b, err := v1.MarshalMsg()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range [][]byte{good, inform, v1b, good[:len(good)/2], v1b[:10], {0x30, 0x80}, {0x30, 0x84, 0xff, 0xff, 0xff, 0xff}, nil} {
		f.Add(s)
	}
	rules := DefaultRules(DefaultCodeBook())
	peer := netip.MustParseAddrPort("127.0.0.1:40000")
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := DecodeTrap(b, peer)
		if err != nil {
			if !strings.Contains(err.Error(), "127.0.0.1:40000") {
				t.Fatalf("error does not name the peer: %v", err)
			}
			return
		}
		if tr.TrapOID == "" || len(tr.Vars) > maxTrapVars {
			t.Fatalf("accepted trap without OID or with %d vars", len(tr.Vars))
		}
		evs := TrapEvents(tr, "127.0.0.1:161", rules, time.Unix(0, 0))
		if len(evs) == 0 {
			t.Fatal("an accepted trap gives at least one (raw) event")
		}
		for _, ev := range evs {
			if ev.Key == "" || len(ev.Text) > 4*maxText || len(ev.Detail["vars"]) > 8*maxText {
				t.Fatalf("unbounded event: key %q text %d vars %d", ev.Key, len(ev.Text), len(ev.Detail["vars"]))
			}
			if strings.ContainsAny(ev.Text, "\x00\x1b\r\n") {
				t.Fatalf("control bytes in event text %q", ev.Text)
			}
		}
	})
}

// FuzzTrapListenerHandle drives the listener's per-datagram handler
// (including the inform reply path) with arbitrary bytes.
func FuzzTrapListenerHandle(f *testing.F) {
	f.Add(encodeTrapV2(f, "public", trapVars("1.3.6.1.4.1.1347.0.1"), true))
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01})
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x03}) // the start of an SNMPv3 message: the v3 path
	cfg := DefaultTrapListenerConfig("127.0.0.1:0", scanwarden.NewSecret("public"))
	cfg.Users = []V3Auth{{User: "fuzz", AuthPass: scanwarden.NewSecret("fuzz-auth-pass"), PrivPass: scanwarden.NewSecret("fuzz-priv-pass")}}
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	l, err := NewTrapListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(NewMemorySink(0, 100), nil, nil, nil), nil)
	if err != nil {
		f.Fatal(err)
	}
	if err := l.Open(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { l.Close() })
	// Replies go to a port nobody listens on, on loopback.
	peer := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, b []byte) {
		l.handle(context.Background(), b, peer)
	})
}

// FuzzParseMail: any bytes as an e-mail give a result or an error, never a
// panic, and the text kept is bounded and free of control bytes.
func FuzzParseMail(f *testing.F) {
	f.Add([]byte(kyoceraMail))
	f.Add([]byte("From: a@b.c\r\nSubject: =?utf-8?b?U2VuZCBlcnJvciAxMTAy?=\r\nContent-Transfer-Encoding: base64\r\n\r\nU2VuZCBlcnJvciAxMTAy\r\n"))
	f.Add([]byte("From: a@b.c\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: multipart/alternative; boundary=y\r\n\r\n--y\r\n\r\nError 1103\r\n--y--\r\n--x--\r\n"))
	f.Add([]byte("From: <<<\r\n\r\n"))
	f.Add([]byte("\x00\xff\r\n\r\n"))
	rules := DefaultRules(DefaultCodeBook())
	f.Fuzz(func(t *testing.T, b []byte) {
		pm, err := ParseMail(bytes.NewReader(b))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "mail: ") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		if len(pm.Lines) > maxMailLines+1 {
			t.Fatalf("%d lines", len(pm.Lines))
		}
		for _, l := range pm.Lines {
			if strings.ContainsAny(l, "\x00\x1b\r\n") {
				t.Fatalf("control bytes kept: %q", l)
			}
		}
		for _, ev := range MailEvents(pm, "d", rules, time.Unix(0, 0)) {
			if !rules.Book().Known(ev.Code) {
				t.Fatalf("event with unknown code %q", ev.Code)
			}
		}
	})
}

// FuzzRulesMatch: the rule matcher with default and admin rules on any
// text never panics, only returns code-book codes (unless any_code), and
// CleanText output is stable.
func FuzzRulesMatch(f *testing.F) {
	for _, s := range []string{"Send error. Error code: 1102", "Toner is low. (K)", "1102", "Error 2205", "NG 3101 \\\\srv\\share",
		"<script>alert(1)</script> Send error 1103", strings.Repeat("error ", 2000) + "1101", "\xff\xfe\x00 send 1101"} {
		f.Add(s, uint8(0), int64(0))
	}
	v := int64(4011)
	rules, err := NewRules(DefaultCodeBook(), []Rule{
		{ID: "value", OID: oidKcprtAlertStateCode, Value: &v, Code: "1102"},
		{ID: "ignore", Pattern: `(?i)test send`, Ignore: true},
		{ID: "any", Pattern: `(?i)kyo-(?P<code>\d{4})`, AnyCode: true},
	})
	if err != nil {
		f.Fatal(err)
	}
	sources := []Source{SourceJob, SourceConsole, SourceAlert, SourceTrap, SourceMail}
	f.Fuzz(func(t *testing.T, text string, src uint8, n int64) {
		clean := CleanText([]byte(text))
		if CleanText([]byte(clean)) != clean {
			t.Fatalf("CleanText not idempotent on %q", text)
		}
		o := Observation{Source: sources[int(src)%len(sources)], OID: oidKcprtAlertStateCode + ".1.1", Text: clean, Int: &n}
		m, ok := rules.Match(o)
		if !ok || m.Ignore {
			return
		}
		if m.Rule != "any" && !rules.Book().Known(m.Code) {
			t.Fatalf("rule %s gave unknown code %q", m.Rule, m.Code)
		}
		if len(m.Code) != 4 {
			t.Fatalf("code %q", m.Code)
		}
	})
}

// FuzzSMTPSession plays arbitrary bytes as a client's side of an SMTP
// session against the mail listener on loopback (an allowed sender): the
// server must answer and end the session within its deadline, never panic,
// and whatever it stores must be a cleaned event.
func FuzzSMTPSession(f *testing.F) {
	f.Add([]byte("EHLO mfp\r\nMAIL FROM:<mfp02@kyolab.test>\r\nRCPT TO:<s@kyolab.test>\r\nDATA\r\n" +
		strings.ReplaceAll(kyoceraMail, "\r\n.", "\r\n..") + "\r\n.\r\nQUIT\r\n"))
	f.Add([]byte("HELO x\r\nMAIL FROM:<>\r\nRCPT TO:<a>\r\nBDAT 5 LAST\r\nhello"))
	f.Add([]byte("EHLO x\r\nAUTH PLAIN AGFhAGI=\r\nSTARTTLS\r\nRSET\r\nNOOP\r\nVRFY x\r\n"))
	sink := NewMemorySink(time.Hour, 100)
	cfg := DefaultMailListenerConfig("127.0.0.1:0")
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Timeout, cfg.SessionTimeout = time.Second, 2*time.Second
	cfg.MaxConnsPerAddr = cfg.MaxConns
	idx := NewDeviceIndex()
	idx.Add(Inventory{Address: "10.77.0.40:161", Serial: "W4X0A20002"})
	m, err := NewMailListener(cfg, DefaultRules(DefaultCodeBook()), NewRecorder(sink, idx, nil, nil), nil)
	if err != nil {
		f.Fatal(err)
	}
	if err := m.Open(context.Background()); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { m.Close() })
	addr := m.Addr().String()
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Skip(err) // the machine is out of ports, not a finding
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		go func() {
			c.Write(in)
			c.(*net.TCPConn).CloseWrite()
		}()
		if _, err := io.Copy(io.Discard, c); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the session was still open 5 s later (session deadline 2 s)")
			}
		}
		for _, ev := range sink.Snapshot() {
			if strings.ContainsAny(ev.Text, "\x00\x1b\r\n") {
				t.Fatalf("control bytes in event text %q", ev.Text)
			}
		}
	})
}
