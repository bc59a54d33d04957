package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/snmp/snmptest"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// The watch tests use real peers only: snmpsimd serving testlab/snmp on
// 127.0.0.1 (the community picks the fixture), net-snmp's snmptrap, Go's
// SMTP client, and the lab's snmpsim. Every wait is bounded.

// syncBuffer is a bytes.Buffer the watch's goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
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

// watchRun is one `snmp watch` running in the test process.
type watchRun struct {
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan int
}

// startWatch runs `scanwarden snmp watch ARGS` with an empty environment;
// it is cancelled (as by SIGINT) at the latest after 60 s.
func startWatch(t *testing.T, args ...string) *watchRun {
	t.Helper()
	return startWatchEnv(t, nil, args...)
}

// startWatchEnv is startWatch with the environment variables vars.
func startWatchEnv(t *testing.T, vars map[string]string, args ...string) *watchRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	r := &watchRun{cancel: cancel, done: make(chan int, 1)}
	env := environ{stdin: strings.NewReader(""), stdout: &r.stdout, stderr: &r.stderr, getenv: func(k string) string { return vars[k] }}
	go func() { r.done <- runIn(ctx, env, append([]string{"snmp", "watch"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("watch did not stop within 10s of its cancel")
		}
	})
	return r
}

// wait returns the exit status, failing the test after within.
func (r *watchRun) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case code := <-r.done:
		r.done <- code // for the cleanup
		return code
	case <-time.After(within):
		t.Fatalf("watch still running after %s\nstdout:\n%s\nstderr:\n%s", within, r.stdout.String(), r.stderr.String())
		return -1
	}
}

// runWatch runs a watch to its end (it must end within 30 s).
func runWatch(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r := startWatch(t, args...)
	code := r.wait(t, 30*time.Second)
	return code, r.stdout.String(), r.stderr.String()
}

// waitUntil polls cond every 50 ms for up to within.
func waitUntil(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out after %s waiting for %s", within, what)
}

// jsonLines parses --json output, one object a line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

func ofType(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// simAddr starts snmpsimd on loopback and returns its HOST:PORT.
func simAddr(t *testing.T) (string, int) {
	t.Helper()
	port := snmptest.StartSim(t, "../../testlab/snmp", 1)[0]
	return "127.0.0.1:" + strconv.Itoa(port), port
}

func storedEvents(t *testing.T, dir string) ([]store.StoredEvent, []snmp.Inventory) {
	t.Helper()
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	evs, err := st.Events().SNMPEvents(context.Background(), "", time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := st.Events().SNMPDevices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return evs, devs
}

func TestSNMPWatchBadArguments(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	badHosts := writeFile(t, "hosts", "# devices\n127.0.0.1:1161\nmfp 2\n")
	comm := writeFile(t, "community", "kyocera-job1102\n")
	short := writeFile(t, "short", "1234567\n")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to watch", nil, "nothing to watch"},
		{"interval too short", []string{"127.0.0.1:1", "--interval", "500ms"}, "--interval"},
		{"negative cycles", []string{"127.0.0.1:1", "--cycles", "-1"}, "--cycles"},
		{"bad cidr", []string{"--cidr", "banana"}, "--cidr"},
		{"cidr too large", []string{"--cidr", "10.0.0.0/8"}, "--cidr"},
		{"cidrs too large together", []string{"--cidr", "10.0.0.0/22", "--cidr", "10.0.4.0/22"}, "--cidr"},
		{"bad port", []string{"--cidr", "10.0.0.0/24", "--port", "0"}, "--port"},
		{"port without cidr", []string{"127.0.0.1", "--port", "1161"}, "--port"},
		{"bad host", []string{"h:99999"}, "h:99999"},
		{"trap listen without port", []string{"127.0.0.1:1", "--trap-listen", "nonsense"}, "--trap-listen"},
		{"smtp port out of range", []string{"127.0.0.1:1", "--smtp-listen", "127.0.0.1:99999"}, "--smtp-listen"},
		{"hosts file missing", []string{"--hosts", missing}, "--hosts"},
		{"hosts file bad line", []string{"--hosts", badHosts}, "hosts:3"},
		{"trap community without listener", []string{"127.0.0.1:1", "--trap-community-file", comm}, "--trap-community-file needs --trap-listen"},
		{"trap listener without community", []string{"127.0.0.1:1", "--trap-listen", "127.0.0.1:0"}, "--trap-listen needs the community"},
		{"trap v3 user without listener", []string{"127.0.0.1:1", "--trap-v3-user", "u", "--trap-v3-auth-file", comm}, "--trap-v3-user needs --trap-listen"},
		{"trap v3 auth file without user", []string{"127.0.0.1:1", "--trap-listen", "127.0.0.1:0", "--trap-community-file", comm, "--trap-v3-auth-file", comm}, "need --trap-v3-user"},
		{"trap v3 user without passphrase", []string{"127.0.0.1:1", "--trap-listen", "127.0.0.1:0", "--trap-v3-user", "u"}, "noAuth traps are not taken"},
		{"trap v3 passphrase too short", []string{"127.0.0.1:1", "--trap-listen", "127.0.0.1:0", "--trap-v3-user", "u", "--trap-v3-auth-file", short}, "shorter than 8"},
		{"bad allow", []string{"127.0.0.1:1", "--smtp-listen", "127.0.0.1:0", "--allow", "10.0.0.300/24"}, "--allow"},
		{"allow without listener", []string{"127.0.0.1:1", "--allow", "10.0.0.0/24"}, "--allow needs"},
		{"trap community file missing", []string{"127.0.0.1:1", "--trap-listen", "127.0.0.1:0", "--trap-community-file", missing}, "--trap-community-file"},
		{"community file missing", []string{"127.0.0.1:1", "--community-file", missing}, "--community-file"},
		{"v3 without passphrase", []string{"127.0.0.1:1", "--v3-user", "u"}, "--v3-auth-file"},
		{"timeout out of range", []string{"127.0.0.1:1", "--timeout", "2m"}, "timeout"},
		{"rules file missing", []string{"127.0.0.1:1", "--rules", missing}, "--rules"},
		{"unknown flag", []string{"127.0.0.1:1", "--frobnicate"}, "frobnicate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state")
			code, out, errs := runWatch(t, append(c.args, "--state-dir", state)...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, errs)
			}
			if !strings.Contains(errs, c.want) {
				t.Errorf("stderr does not name %q: %s", c.want, errs)
			}
			if out != "" {
				t.Errorf("stdout: %s", out)
			}
			if _, err := os.Stat(state); err == nil {
				t.Error("the state store was opened for a bad command line")
			}
		})
	}
}

// A listener that cannot bind stops the watch before it polls anything:
// exit 2, the flag and the address named, and the other listener closed.
func TestSNMPWatchPortInUse(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	freeTrap := "127.0.0.1:" + strconv.Itoa(snmptest.FreeUDPPorts(t, 1)[0])
	comm := writeFile(t, "trap-community", "trap-secret\n")
	for _, c := range []struct {
		flag, addr string
		args       []string
	}{
		{"--trap-listen", udp.LocalAddr().String(), []string{"--trap-listen", udp.LocalAddr().String()}},
		{"--smtp-listen", tcp.Addr().String(), []string{"--trap-listen", freeTrap, "--smtp-listen", tcp.Addr().String()}},
	} {
		t.Run(c.flag, func(t *testing.T) {
			code, out, errs := runWatch(t, append([]string{"127.0.0.1:1", "--state-dir", t.TempDir(), "--trap-community-file", comm}, c.args...)...)
			if code != exitUsage || !strings.Contains(errs, c.flag+" "+c.addr) || !strings.Contains(errs, "address already in use") {
				t.Errorf("exit %d, stderr %q: want %d naming %s %s", code, errs, exitUsage, c.flag, c.addr)
			}
			if out != "" {
				t.Errorf("stdout: %s", out)
			}
		})
	}
	// The trap listener opened before the SMTP one failed is closed again.
	c, err := net.ListenPacket("udp", freeTrap)
	if err != nil {
		t.Errorf("trap port still held after the failed start: %v", err)
	} else {
		c.Close()
	}
}

// One device with an aborted send job (1102): the event is printed with its
// code book explanation and stored; the second cycle and a second watch
// over the same state do not repeat it.
func TestSNMPWatchJob1102(t *testing.T) {
	addr, _ := simAddr(t)
	comm := writeFile(t, "community", "kyocera-job1102\n")
	state := t.TempDir()
	code, out, errs := runWatch(t, addr, "--community-file", comm, "--state-dir", state, "--cycles", "2", "--interval", "1s")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	entry, ok := snmp.DefaultCodeBook().Lookup("1102")
	if !ok {
		t.Fatal("1102 not in the code book")
	}
	for _, want := range []string{
		"  1102  \"MFP02\" " + addr + " serial \"W4X0A20002\"  [job]  to \"\\\\fs01.kyolab.test\\scans\\alice\"\n",
		"    " + entry.Meaning + " (certainty " + entry.Certainty + ")\n",
		"    likely: " + strings.Join(entry.Causes, ", ") + "\n",
		"    first check: " + entry.FirstCheck + "\n",
		"    device said: \"Send error. 1102",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "  1102  "); n != 1 {
		t.Errorf("the event was printed %d times:\n%s", n, out)
	}
	for _, want := range []string{"watching 1 device every 1s", "cycle 1: ", "new events 1\n", "cycle 2: ", "new events 0\n", "stopped (cycles done) after 2 cycles: 1 new event"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(out+errs, "kyocera-job1102") {
		t.Error("the community was printed")
	}
	evs, devs := storedEvents(t, state)
	if len(evs) != 1 || evs[0].Code != "1102" || evs[0].Source != snmp.SourceJob || evs[0].Device != addr || evs[0].Destination != `\\fs01.kyolab.test\scans\alice` {
		t.Errorf("stored events %+v", evs)
	}
	if len(devs) != 1 || devs[0].SysName != "MFP02" || devs[0].Serial != "W4X0A20002" {
		t.Errorf("stored devices %+v", devs)
	}
	// A new watch reads the job table from the top and finds the job again:
	// the store knows it, so it is not new.
	code, out, errs = runWatch(t, addr, "--community-file", comm, "--state-dir", state, "--cycles", "1")
	if code != exitOK || out != "" || !strings.Contains(errs, "new events 0") {
		t.Errorf("second watch: exit %d stdout %q stderr %q", code, out, errs)
	}
	if evs, _ := storedEvents(t, state); len(evs) != 1 || evs[0].Count != 2 {
		t.Errorf("after the second watch: %+v", evs)
	}
}

// A condition that stays on the panel is seen every cycle and printed once
// (--json; devices from --hosts).
func TestSNMPWatchDedupJSON(t *testing.T) {
	addr, _ := simAddr(t)
	hosts := writeFile(t, "hosts", "# reception\n"+addr+"  # MFP03\n\n")
	comm := writeFile(t, "community", "kyocera-console1102\n")
	code, out, errs := runWatch(t, "--hosts", hosts, "--community-file", comm, "--state-dir", t.TempDir(), "--cycles", "2", "--interval", "1s", "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	lines := jsonLines(t, out)
	var types []string
	for _, l := range lines {
		types = append(types, l["type"].(string))
	}
	if strings.Join(types, ",") != "start,event,cycle,cycle,stop" {
		t.Fatalf("lines %v:\n%s", types, out)
	}
	ev, c1, c2 := lines[1], lines[2], lines[3]
	if ev["code"] != "1102" || ev["source"] != "console" || ev["device"] != addr || ev["sys_name"] != "MFP03" ||
		ev["meaning"] == "" || len(ev["causes"].([]any)) == 0 || ev["first_check"] == "" || ev["key"] == "" {
		t.Errorf("event %v", ev)
	}
	if c1["new_events"] != 1.0 || c2["events"] != 1.0 || c2["new_events"] != 0.0 || c2["answered"] != 1.0 {
		t.Errorf("cycles %v / %v", c1, c2)
	}
	if s := lines[0]; s["devices"].([]any)[0] != addr || s["interval"] != "1s" {
		t.Errorf("start %v", s)
	}
	if st := lines[4]; st["reason"] != "cycles done" || st["new_events"] != 1.0 {
		t.Errorf("stop %v", st)
	}
}

// Secrets from the environment are used and never printed; a community on
// the command line works with a warning.
func TestSNMPWatchSecretsFromEnvironment(t *testing.T) {
	addr, _ := simAddr(t)
	r := startWatchEnv(t, map[string]string{"SCANWARDEN_SNMP_COMMUNITY": "kyocera-job1102", "SCANWARDEN_TRAP_COMMUNITY": "trap-secret-77c2"},
		addr, "--state-dir", t.TempDir(), "--cycles", "1", "--trap-listen", "127.0.0.1:0")
	if code := r.wait(t, 30*time.Second); code != exitOK {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	out, errs := r.stdout.String(), r.stderr.String()
	if !strings.Contains(out, "  1102  \"MFP02\"") || !strings.Contains(errs, "(accepted communities: 1)") {
		t.Errorf("the environment's communities were not used:\n%s\n%s", out, errs)
	}
	if strings.Contains(out+errs, "kyocera-job1102") || strings.Contains(out+errs, "trap-secret") || strings.Contains(errs, "warning") {
		t.Errorf("secret printed or warning:\n%s\n%s", out, errs)
	}
	// --community is gone: a secret on the command line is readable by
	// every local user (/proc/PID/cmdline).
	if code, _, errs := runWatch(t, addr, "--community", "kyocera-console1102", "--state-dir", t.TempDir(), "--cycles", "1"); code != exitUsage || !strings.Contains(errs, "community") {
		t.Errorf("--community: exit %d\n%s", code, errs)
	}
}

// --cidr sweeps (here 127.0.0.1/32 on snmpsim's port) and watches the
// Kyocera devices that answer; a sweep without one has nothing to watch.
func TestSNMPWatchCIDR(t *testing.T) {
	addr, port := simAddr(t)
	comm := writeFile(t, "community", "kyocera-job1102\n")
	code, out, errs := runWatch(t, "--cidr", "127.0.0.1/32", "--port", strconv.Itoa(port), "--community-file", comm,
		"--state-dir", t.TempDir(), "--cycles", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	lines := jsonLines(t, out)
	evs := ofType(lines, "event")
	if len(evs) != 1 || evs[0]["code"] != "1102" || evs[0]["device"] != addr || evs[0]["sys_name"] != "MFP02" {
		t.Errorf("events %v", evs)
	}
	generic := writeFile(t, "community", "generic-printer\n")
	code, out, errs = runWatch(t, "--cidr", "127.0.0.1/32", "--port", strconv.Itoa(port), "--community-file", generic,
		"--state-dir", t.TempDir(), "--cycles", "1")
	if code != exitFinding || out != "" || !strings.Contains(errs, "no Kyocera answered in [127.0.0.1/32] (1 other SNMP devices)") {
		t.Errorf("generic printer only: exit %d stdout %q stderr %q", code, out, errs)
	}
}

// The watch's own e-mail: a Kyocera "Send Result Report" in plain text.
const watchMail = "From: MFP02 <mfp02@kyolab.test>\r\n" +
	"To: scanwarden@kyolab.test\r\n" +
	"Subject: Send Result Report\r\n" +
	"Message-ID: <result-77@mfp02.kyolab.test>\r\n" +
	"Date: Sat, 01 Mar 2025 11:20:00 +0100\r\n" +
	"Content-Type: text/plain; charset=us-ascii\r\n" +
	"\r\n" +
	"Serial Number: W4X0A20002\r\n" +
	"Job No.: 000077\r\n" +
	"Destination: \\\\fs01.kyolab.test\\scans\\alice\r\n" +
	"Result: Error 1102\r\n"

// A running watch turns a trap sent with snmptrap and an e-mail sent over
// SMTP into events matched to the polled device, refuses a trap with the
// wrong community, and on cancel (SIGINT) stops cleanly: exit 0, the
// listeners' ports free again, everything in the store.
func TestSNMPWatchTrapsAndMail(t *testing.T) {
	if _, err := exec.LookPath("snmptrap"); err != nil {
		testlab.Missing(t, "snmptrap not installed (apt-get install snmp; testlab/deps): skipping the watch trap test")
	}
	addr, _ := simAddr(t)
	comm := writeFile(t, "community", "kyocera-job1102\n")
	trapComm := writeFile(t, "trap-community", "trap-secret-5b1d\n")
	state := t.TempDir()
	r := startWatch(t, addr, "--community-file", comm, "--state-dir", state, "--interval", "1s", "--json",
		"--trap-listen", "127.0.0.1:0", "--trap-community-file", trapComm, "--smtp-listen", "127.0.0.1:0")
	var start map[string]any
	waitUntil(t, 10*time.Second, "the first cycle", func() bool {
		lines := jsonLines(t, r.stdout.String())
		if s := ofType(lines, "start"); len(s) == 1 {
			start = s[0]
		}
		return len(ofType(lines, "cycle")) > 0
	})
	trapAddr, _ := start["trap_listen"].(string)
	smtpAddr, _ := start["smtp_listen"].(string)
	if !strings.HasPrefix(trapAddr, "127.0.0.1:") || !strings.HasPrefix(smtpAddr, "127.0.0.1:") || start["trap_communities"] != 1.0 {
		t.Fatalf("start %v", start)
	}
	snmptrap := func(community, text string) {
		t.Helper()
		cmd := exec.Command("snmptrap", "-v2c", "-c", community, trapAddr, "4242", "1.3.6.1.2.1.43.18.2.0.1",
			"1.3.6.1.2.1.43.18.1.1.8.1.7", "s", text)
		cmd.Env = append(cmd.Environ(), "MIBS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("snmptrap: %v\n%s", err, b)
		}
	}
	snmptrap("wrong-community", `Send error 1101 \\fs01\scans\refused`)
	snmptrap("trap-secret-5b1d", `Send error 1103 \\fs01\scans\finance`)
	if err := smtp.SendMail(smtpAddr, nil, "mfp02@kyolab.test", []string{"scanwarden@kyolab.test"}, []byte(watchMail)); err != nil {
		t.Fatalf("SMTP: %v", err)
	}
	bySource := map[string]map[string]any{}
	waitUntil(t, 10*time.Second, "the trap and the mail as events, and a cycle that counted them", func() bool {
		lines := jsonLines(t, r.stdout.String())
		for _, ev := range ofType(lines, "event") {
			bySource[ev["source"].(string)] = ev
		}
		cycles := ofType(lines, "cycle")
		last := cycles[len(cycles)-1]
		traps, _ := last["traps"].(map[string]any)
		mail, _ := last["mail"].(map[string]any)
		return bySource["trap"] != nil && bySource["mail"] != nil && traps != nil && traps["packets"] == 2.0 && mail != nil && mail["messages"] == 1.0
	})
	r.cancel()
	if code := r.wait(t, 10*time.Second); code != exitOK {
		t.Errorf("exit %d after cancel\n%s", code, r.stderr.String())
	}
	lines := jsonLines(t, r.stdout.String())
	if stop := lines[len(lines)-1]; stop["type"] != "stop" || stop["reason"] != "interrupted" {
		t.Errorf("last line %v", stop)
	}
	cycles := ofType(lines, "cycle")
	if traps := cycles[len(cycles)-1]["traps"].(map[string]any); traps["refused"] != 1.0 || traps["new_events"] != 1.0 {
		t.Errorf("trap figures %v", traps)
	}
	entry, _ := snmp.DefaultCodeBook().Lookup("1103")
	if ev := bySource["trap"]; ev["code"] != "1103" || ev["device"] != addr || ev["sys_name"] != "MFP02" ||
		ev["destination"] != `\\fs01\scans\finance` || ev["meaning"] != entry.Meaning {
		t.Errorf("trap event %v", ev)
	}
	if ev := bySource["mail"]; ev["code"] != "1102" || ev["device"] != addr || ev["destination"] != `\\fs01.kyolab.test\scans\alice` ||
		ev["detail"].(map[string]any)["matched_by"] != "serial" {
		t.Errorf("mail event %v", ev)
	}
	if ev := bySource["job"]; ev == nil || ev["code"] != "1102" {
		t.Errorf("job event %v", ev)
	}
	if n := len(ofType(lines, "event")); n != 3 {
		t.Errorf("%d events, want job, trap and mail:\n%s", n, r.stdout.String())
	}
	if strings.Contains(r.stdout.String()+r.stderr.String(), "trap-secret") {
		t.Error("the trap community was printed")
	}
	// Closed: both ports can be bound again.
	if c, err := net.ListenPacket("udp", trapAddr); err != nil {
		t.Errorf("trap port still held: %v", err)
	} else {
		c.Close()
	}
	if l, err := net.Listen("tcp", smtpAddr); err != nil {
		t.Errorf("SMTP port still held: %v", err)
	} else {
		l.Close()
	}
	evs, _ := storedEvents(t, state)
	sources := map[snmp.Source]string{}
	for _, ev := range evs {
		sources[ev.Source] = ev.Code
	}
	if len(evs) != 3 || sources[snmp.SourceJob] != "1102" || sources[snmp.SourceTrap] != "1103" || sources[snmp.SourceMail] != "1102" {
		t.Errorf("stored %+v", evs)
	}
}

// TestSNMPWatchLab sweeps the lab's snmpsim (10.77.0.40) as a one-address
// CIDR and reports its aborted 1102 job; skipped when the lab is not up.
func TestSNMPWatchLab(t *testing.T) {
	lab := testlab.Require(t)
	ip := lab.Getenv("SWLAB_SNMPSIM_IP")
	if ip == "" {
		testlab.Missing(t, "lab is up but testlab/snmp.sh did not export SWLAB_SNMPSIM_IP")
	}
	port := lab.Getenv("SWLAB_SNMP_PORT")
	if port == "" {
		port = "161"
	}
	comm := writeFile(t, "community", "kyocera-job1102\n")
	code, out, errs := runWatch(t, "--cidr", ip+"/32", "--port", port, "--community-file", comm, "--state-dir", t.TempDir(), "--cycles", "1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	evs := ofType(jsonLines(t, out), "event")
	if len(evs) != 1 || evs[0]["code"] != "1102" || evs[0]["device"] != net.JoinHostPort(ip, port) || evs[0]["sys_name"] != "MFP02" || evs[0]["meaning"] == "" {
		t.Errorf("events %v\n%s", evs, errs)
	}
}

// `snmp watch` with both listeners and a silent device stops within 2 s of
// SIGTERM, exit 0, in each of 100 runs; the signal arrives at a different
// point of the start-up each time (store open, listener binding, the first
// poll), which is where Close once left the SMTP Accept blocked. The whole
// A signal before Go's handler is installed kills the process, which counts
// as stopped. The whole test is bounded: 100 runs, each killed after 10 s.
func TestSNMPWatchStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 100 process starts")
	}
	state := t.TempDir()
	comm := writeFile(t, "trap-community", "trap-secret\n")
	const runs = 100
	var slow []string
	for i := range runs {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "snmp", "watch", "127.0.0.1:9", "--state-dir", state,
			"--interval", "1s", "--timeout", "5s", "--trap-listen", "127.0.0.1:0", "--trap-community-file", comm, "--smtp-listen", "127.0.0.1:0", "--json")
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// 0 to ~200 ms after the start: before, during and after start-up.
		time.Sleep(time.Duration(i*i%211) * time.Millisecond)
		sent := time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			took := time.Since(sent)
			if took > 2*time.Second {
				slow = append(slow, fmt.Sprintf("run %d: %s", i, took))
			}
			// Killed by the signal itself: it came before Go's handler was
			// installed, and stopping is what was asked.
			var ee *exec.ExitError
			killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM
			if err != nil && !killed {
				t.Errorf("run %d (signal after %d ms): %v\nstdout:\n%s\nstderr:\n%s", i, i*i%211, err, stdout.String(), stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("run %d (signal after %d ms): still running 10 s after SIGTERM\nstdout:\n%s\nstderr:\n%s", i, i*i%211, stdout.String(), stderr.String())
		}
	}
	if len(slow) > 0 {
		t.Errorf("%d of %d runs took over 2 s to stop: %v", len(slow), runs, slow)
	}
}

// Forged mail from a host that is no watched device (127.0.0.2; the device
// is snmpsim on 127.0.0.1) quoting the device's real serial is refused at
// connect and nothing of it is stored or printed; the device's own mail
// still is.
func TestSNMPWatchRefusesForgedMail(t *testing.T) {
	addr, _ := simAddr(t)
	comm := writeFile(t, "community", "kyocera-job1102\n")
	state := t.TempDir()
	r := startWatch(t, addr, "--community-file", comm, "--state-dir", state, "--interval", "1h", "--json",
		"--smtp-listen", "127.0.0.1:0")
	var smtpAddr string
	waitUntil(t, 10*time.Second, "the first cycle", func() bool {
		lines := jsonLines(t, r.stdout.String())
		if s := ofType(lines, "start"); len(s) == 1 {
			smtpAddr, _ = s[0]["smtp_listen"].(string)
		}
		return len(ofType(lines, "cycle")) > 0
	})
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}
	for i := range 50 {
		c, err := d.Dial("tcp", smtpAddr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		cl, err := smtp.NewClient(c, "127.0.0.1")
		if err == nil {
			forged := strings.Replace(watchMail, "Message-ID: <", fmt.Sprintf("Message-ID: <forged-%d-", i), 1)
			err = cl.Mail("mfp02@kyolab.test")
			if err == nil {
				err = cl.Rcpt("x@kyolab.test")
			}
			if err == nil {
				var wc io.WriteCloser
				if wc, err = cl.Data(); err == nil {
					wc.Write([]byte(forged))
					err = wc.Close()
				}
			}
		}
		c.Close()
		if err == nil || !strings.Contains(err.Error(), "554") {
			t.Fatalf("forged mail %d: err = %v, want 554", i, err)
		}
	}
	if err := smtp.SendMail(smtpAddr, nil, "mfp02@kyolab.test", []string{"scanwarden@kyolab.test"}, []byte(watchMail)); err != nil {
		t.Fatalf("device mail: %v", err)
	}
	waitUntil(t, 10*time.Second, "the device's mail event", func() bool {
		for _, ev := range ofType(jsonLines(t, r.stdout.String()), "event") {
			if ev["source"] == "mail" {
				return true
			}
		}
		return false
	})
	r.cancel()
	r.wait(t, 10*time.Second)
	evs, _ := storedEvents(t, state)
	mail := 0
	for _, ev := range evs {
		if ev.Source == snmp.SourceMail {
			mail++
			if ev.Device != addr || ev.Unverified {
				t.Errorf("mail event %+v", ev)
			}
		}
	}
	if mail != 1 {
		t.Errorf("%d mail events stored, want the device's 1: %+v", mail, evs)
	}
	if n := len(ofType(jsonLines(t, r.stdout.String()), "event")); n != 2 {
		t.Errorf("%d events printed, want the job and the device's mail:\n%s", n, r.stdout.String())
	}
}
