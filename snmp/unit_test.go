package snmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

// The causes themselves are checked against smbcheck's vocabulary in
// vocabulary_test.go (an external test package: snmp does not import smbcheck).
func TestCodeBookEntriesComplete(t *testing.T) {
	book := DefaultCodeBook()
	entries := book.Entries()
	if len(entries) < 15 {
		t.Fatalf("code book has %d entries, want the send-error table", len(entries))
	}
	for _, e := range entries {
		for _, c := range e.Causes {
			if c == "ok" {
				t.Errorf("code %s: 'ok' cannot explain a failure", e.Code)
			}
		}
		if e.Source == "" || e.Certainty == "" || e.FirstCheck == "" {
			t.Errorf("code %s: source, certainty and first_check are required", e.Code)
		}
	}
	for _, code := range []string{"1101", "1102", "1103", "1105", "2101", "2102", "2103", "3101"} {
		if !book.Known(code) {
			t.Errorf("issue 4 names %s; the code book lacks it", code)
		}
	}
	// The hints, checked so an edit cannot silently invert them.
	want := map[string]string{"1101": "name-unresolved", "1102": "bad-credentials", "1103": "path-not-found", "2102": "timeout", "2101": "host-unreachable"}
	for code, cause := range want {
		e, _ := book.Lookup(code)
		if len(e.Causes) == 0 || e.Causes[0] != cause {
			t.Errorf("code %s: first cause %v, want %s", code, e.Causes, cause)
		}
	}
}

func TestCodeBookFamilyAndErrors(t *testing.T) {
	book := DefaultCodeBook()
	if e, ok := book.Lookup("2205"); !ok || e.Code != "22xx" {
		t.Errorf("2205 -> %+v %v, want the 22xx family", e, ok)
	}
	if e, ok := book.Lookup("2201"); !ok || e.Code != "2201" {
		t.Errorf("2201 -> %q, want its own entry", e.Code)
	}
	if _, ok := book.Lookup("7777"); ok {
		t.Error("7777 should be unknown")
	}
	for name, doc := range map[string]string{
		"certainty": `{"entries":[{"code":"1102","meaning":"m","causes":["unknown"],"source":"s","certainty":"sure"}]}`,
		"code":      `{"entries":[{"code":"11022","meaning":"m","causes":["unknown"],"source":"s","certainty":"low"}]}`,
		"source":    `{"entries":[{"code":"1102","meaning":"m","causes":["unknown"],"certainty":"low"}]}`,
		"duplicate": `{"entries":[{"code":"1102","meaning":"m","causes":["unknown"],"source":"s","certainty":"low"},{"code":"1102","meaning":"m","causes":["unknown"],"source":"s","certainty":"low"}]}`,
	} {
		if _, err := ParseCodeBook(strings.NewReader(doc)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want it to name %q", name, err, name)
		}
	}
}

func TestTargetNeverPrintsSecrets(t *testing.T) {
	s := scanwarden.NewSecret("hunter2-community")
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.Info("x", "community", s, "target", Target{Host: "h", Community: s, V3: &V3Auth{User: "u", AuthPass: s, PrivPass: s}})
	j, _ := json.Marshal(Target{Host: "h", Community: s, V3: &V3Auth{AuthPass: s, PrivPass: s}})
	outs := []string{
		fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s %q %x %d", s, s, s, s, s, s, s),
		fmt.Sprintf("%+v", Target{Community: s}), fmt.Sprintf("%#v", Target{Community: s}),
		buf.String(), string(j), Target{Host: "h", Community: s}.String(),
	}
	for _, o := range outs {
		if strings.Contains(o, "hunter2") {
			t.Errorf("secret leaked: %s", o)
		}
	}
	if !strings.Contains(string(j), "[redacted]") {
		t.Errorf("json: %s", j)
	}
	var back scanwarden.Secret
	if err := json.Unmarshal([]byte(`"abc"`), &back); err != nil || back.Reveal() != "abc" {
		t.Errorf("unmarshal: %v %q", err, back.Reveal())
	}
}

func TestCleanText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Ready to print.", "Ready to print."},
		{"a\x00b\x1b[31mc\x07", "a\uFFFDb\uFFFD[31mc\uFFFD"},
		{"\xff\xfeKyo", "\uFFFD\uFFFDKyo"},
		{"  Send\r\n\terror  ", "Send error"},
		{"bidi\u202eevil", "bidi\uFFFDevil"},
		{"<script>alert(1)</script>", "<script>alert(1)</script>"}, // data, escaped by the renderer
	} {
		if got := CleanText([]byte(c.in)); got != c.want {
			t.Errorf("CleanText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := CleanText(bytes.Repeat([]byte("x"), 100_000))
	if len(long) > maxText {
		t.Errorf("CleanText kept %d runes", len(long))
	}
}

func TestRulesMatch(t *testing.T) {
	rules := DefaultRules(DefaultCodeBook())
	for _, c := range []struct {
		src  Source
		oid  string
		text string
		want string // "" = no match
	}{
		{SourceConsole, oidPrtConsoleDisplayText, "Send error. Error code: 1102", "1102"},
		{SourceConsole, oidPrtConsoleDisplayText, "Error 1101: Send failed.", "1101"},
		{SourceAlert, oidKcprtAlertStateDisp, "Send error (1103)", "1103"},
		{SourceMail, "", "Result: NG 2102", "2102"},
		{SourceMail, "", "Result: Error 2205", "2205"}, // 22xx family
		{SourceMail, "", "Result: OK", ""},
		{SourceAlert, oidPrtAlertDescription, "Toner is low. (K)", ""},
		{SourceAlert, oidPrtAlertDescription, "Replace the toner. 1101 pages left", ""}, // no send/error word
		{SourceConsole, oidPrtConsoleDisplayText, "Error 7990", ""},                     // not in the code book
		{SourceConsole, oidPrtConsoleDisplayText, "Ready to print. 2025", ""},
		{SourceJob, oidJmAttrValueAsOctets + ".1.58.6.1", "1102", "1102"},
		{SourceConsole, oidPrtConsoleDisplayText, "1102", ""}, // bare number only counts in a failed job
	} {
		m, ok := rules.Match(Observation{Source: c.src, OID: c.oid, Text: c.text})
		got := ""
		if ok && !m.Ignore {
			got = m.Code
		}
		if got != c.want {
			t.Errorf("%s %q: got %q (rule %s), want %q", c.src, c.text, got, m.Rule, c.want)
		}
	}
	// prtAlertCode numbers are Printer-MIB codes: 1101 is markerTonerEmpty.
	v := int64(1101)
	if m, ok := rules.Match(Observation{Source: SourceAlert, OID: oidPrtAlertCode + ".1.1", Int: &v}); ok {
		t.Errorf("prtAlertCode 1101 matched %+v", m)
	}
}

func TestAdminRules(t *testing.T) {
	v := int64(4011)
	admin := []Rule{
		{ID: "site-kc-state", Sources: []Source{SourceAlert}, OID: oidKcprtAlertStateCode, Value: &v, Code: "1102"},
		{ID: "site-ignore-test-page", Pattern: `(?i)test send`, Ignore: true},
		{ID: "site-german", Pattern: `Sendefehler\D{0,10}(?P<code>\d{4})`},
	}
	rules, err := NewRules(DefaultCodeBook(), admin)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := rules.Match(Observation{Source: SourceAlert, OID: oidKcprtAlertStateCode + ".1.1", Int: &v}); !ok || m.Code != "1102" {
		t.Errorf("value rule: %+v %v", m, ok)
	}
	if m, ok := rules.Match(Observation{Source: SourceConsole, Text: "Test send error 1102"}); !ok || !m.Ignore {
		t.Errorf("ignore rule: %+v %v", m, ok)
	}
	if m, ok := rules.Match(Observation{Source: SourceConsole, Text: "Sendefehler 1103"}); !ok || m.Code != "1103" || m.Rule != "site-german" {
		t.Errorf("german: %+v %v", m, ok)
	}
	for field, bad := range map[string]Rule{
		"pattern": {ID: "x", Pattern: "(", Code: "1102"},
		"code":    {ID: "x", Pattern: "a", Code: "99"},
		"sources": {ID: "x", Pattern: "a", Code: "1102", Sources: []Source{"fax"}},
		"oid":     {ID: "x", Pattern: "a", Code: "1102", OID: "1.3.x"},
		"id":      {Pattern: "a", Code: "1102"},
	} {
		if _, err := NewRules(DefaultCodeBook(), []Rule{bad}); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: err = %v", field, err)
		}
	}
}

func TestExpandPrefix(t *testing.T) {
	as, err := ExpandPrefix(mustPrefix(t, "127.0.0.0/29"), 16)
	if err != nil || len(as) != 6 || as[0].String() != "127.0.0.1" {
		t.Errorf("%v %v", as, err)
	}
	if _, err := ExpandPrefix(mustPrefix(t, "127.0.0.0/8"), 1024); err == nil {
		t.Error("a /8 must be refused")
	}
}

func TestDeduper(t *testing.T) {
	d := NewDeduper(time.Minute, 3)
	t0 := time.Unix(1000, 0)
	if !d.Fresh("a", t0) || d.Fresh("a", t0.Add(30*time.Second)) || d.Fresh("a", t0.Add(80*time.Second)) {
		t.Error("a refreshed sighting within the window must stay a duplicate")
	}
	if !d.Fresh("a", t0.Add(200*time.Second)) {
		t.Error("after a quiet window the key is fresh again")
	}
	for i := 0; i < 100; i++ {
		d.Fresh(fmt.Sprint(i), t0.Add(time.Duration(i)*time.Millisecond+300*time.Second))
	}
	if len(d.seen) > 3 {
		t.Errorf("deduper holds %d keys, max 3", len(d.seen))
	}
}

// TestSplitBulk checks the GETBULK layout: non-repeaters first, then the
// repeaters interleaved; a column stops where it leaves its subtree.
func TestSplitBulk(t *testing.T) {
	var vars []gosnmp.SnmpPDU
	vars = append(vars, gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.1.3.0", Type: gosnmp.TimeTicks, Value: uint32(5)},
		gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.25.3.5.1.1.1", Type: gosnmp.Integer, Value: 4},
		gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.25.3.5.1.2.1", Type: gosnmp.OctetString, Value: []byte{0x20, 0x80}})
	for r := 0; r < 2; r++ {
		for i, col := range statusColumns {
			name := fmt.Sprintf("%s.1.%d", col, r+1)
			if i == colConsole && r == 1 {
				name = "1.3.6.1.2.1.43.17.1" // left the column
			}
			v := gosnmp.SnmpPDU{Name: "." + name, Type: gosnmp.Integer, Value: 8}
			if i == colConsole || i == colAlertDescr || i == colKcDisplay {
				v = gosnmp.SnmpPDU{Name: "." + name, Type: gosnmp.OctetString, Value: []byte("Send error 1102")}
			}
			vars = append(vars, v)
		}
	}
	sc, cols := splitBulk(vars, 3, 2)
	st := decodeStatus(sc, cols)
	if st.Printer != "printing" || st.UpTime != 5 || strings.Join(st.Errors, ",") != "lowToner,inputTrayMissing" {
		t.Errorf("scalars: %+v", st)
	}
	if len(st.Console) != 1 || cols.more[colConsole] || !cols.more[colJobState] || len(st.jobs) != 2 {
		t.Errorf("columns: console %v more %v jobs %d", st.Console, cols.more, len(st.jobs))
	}
	if got := failedSendCandidates(st.jobs); len(got) != 2 {
		t.Errorf("aborted jobs: %d", len(got))
	}
}

func TestFixturesAreSortedSnmprec(t *testing.T) {
	files, _ := filepath.Glob("../testlab/snmp/*.snmprec")
	if len(files) < 6 {
		t.Fatalf("fixtures: %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var oids []string
		for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			parts := strings.SplitN(line, "|", 3)
			if len(parts) != 3 || !validOID(parts[0]) {
				t.Errorf("%s:%d: not OID|TAG|VALUE: %q", f, i+1, line)
				continue
			}
			oids = append(oids, parts[0])
		}
		if !sort.SliceIsSorted(oids, func(i, j int) bool { return oidLess(oids[i], oids[j]) }) {
			t.Errorf("%s: OIDs are not in order (snmpsim needs them sorted)", f)
		}
	}
}

func TestDeviceIndexByIP(t *testing.T) {
	idx := NewDeviceIndex()
	idx.Add(Inventory{Address: "127.0.0.1:1161"})
	idx.Add(Inventory{Address: "[::1]:161", Serial: "W4X0A20002"})
	idx.Add(Inventory{Address: "mfp09.kyolab.test:161"}) // a name: not indexed by IP
	for ip, want := range map[string]string{"127.0.0.1": "127.0.0.1:1161", "::ffff:127.0.0.1": "127.0.0.1:1161", "::1": "[::1]:161", "10.0.0.9": ""} {
		got, ok := idx.ByIP(netip.MustParseAddr(ip))
		if got != want || ok != (want != "") {
			t.Errorf("ByIP(%s) = %q %v, want %q", ip, got, ok, want)
		}
	}
}
