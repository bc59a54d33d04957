package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/notify"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
	"github.com/scanwarden/scanwarden/web"
)

// hookPeer is a webhook receiver (a real HTTP server on loopback).
type hookPeer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	msgs []notify.Message
	hdr  []string
}

func newHookPeer(t *testing.T) *hookPeer {
	h := &hookPeer{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m notify.Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		h.mu.Lock()
		h.msgs = append(h.msgs, m)
		h.hdr = append(h.hdr, r.Header.Get("X-Scanwarden-Secret"))
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookPeer) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, m := range h.msgs {
		out = append(out, m.Event+":"+m.Incident.Cause)
	}
	return out
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

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

func testConfig(t *testing.T, extra string) config.Config {
	t.Helper()
	dir := t.TempDir()
	text := "data_dir = \"" + filepath.Join(dir, "data") + "\"\nlisten = \"127.0.0.1:0\"\n" + extra
	file := filepath.Join(dir, "serve.toml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testStore opens cfg's store with its own key file (made on first use),
// as serve will; the caller closes it before starting serve.
func testStore(t *testing.T, cfg config.Config) *store.Store {
	t.Helper()
	st, err := store.OpenUnlocked(context.Background(), cfg.DataDir, filepath.Join(cfg.DataDir, "secret.key"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// startMain opens serve on cfg and closes it when the test ends, printing
// its log when the test failed.
func startMain(t *testing.T, cfg config.Config) (*Main, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	m := &Main{Config: &cfg, Stderr: logs, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	return m, logs
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The whole daemon on port 0 without the lab: a destination whose server
// refuses connections (a closed loopback port: a real refusal) is checked on
// schedule, an incident opens, the webhook hears it with the secret header,
// /healthz answers, and Close returns promptly.
func TestMainPortZero(t *testing.T) {
	hook := newHookPeer(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hook.secret"), []byte("hook-s3cret\n"), 0o600)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	cfg := testConfig(t, `
[checks]
interval = "10s"
jitter = "0s"
timeout = "2s"
[notify]
webhook_url = "`+hook.srv.URL+`/hook"
webhook_secret_file = "`+filepath.Join(dir, "hook.secret")+`"
webhook_backoff = "10ms"
`)
	// Register before start: the store is the registry.
	st, err := store.OpenDir(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(cfg.DataDir, "secret.key")
	if _, err := st.UnlockKey(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if err := st.Devices().PutDevice(context.Background(), registry.Device{Name: "MFP01"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Destinations().PutDestination(context.Background(), registry.Destination{Name: "reception", Host: "127.0.0.1", Port: closedPort,
		Share: "scans", User: "scan", Password: scanwarden.NewSecret("pw-never-shown"), Device: "MFP01", Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var logs syncBuffer
	m := &Main{Config: &cfg, Stderr: &logs, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			m.Close()
		}
	}()
	base := "http://" + m.Addr().String()
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "ok") {
		t.Fatalf("healthz %d %q", resp.StatusCode, body)
	}

	waitUntil(t, 15*time.Second, "incident.opened at the webhook", func() bool { return len(hook.events()) > 0 })
	if ev := hook.events(); ev[0] != "incident.opened:host-unreachable" {
		t.Fatalf("webhook got %v", ev)
	}
	hook.mu.Lock()
	if hook.hdr[0] != "hook-s3cret" {
		t.Fatalf("secret header %q", hook.hdr[0])
	}
	hook.mu.Unlock()
	incs, err := m.Store().Incidents().Incidents(context.Background(), store.IncidentFilter{State: incident.StateOpen})
	if err != nil || len(incs) != 1 || incs[0].Destination != "reception" {
		t.Fatalf("incidents %+v %v", incs, err)
	}
	tl, _ := m.Store().Incidents().Timeline(context.Background(), incs[0].ID, 0)
	waitUntil(t, 5*time.Second, "notification on the timeline", func() bool {
		tl, _ = m.Store().Incidents().Timeline(context.Background(), incs[0].ID, 0)
		return len(tl) > 0 && tl[len(tl)-1].Kind == incident.EntryNotification
	})
	// metrics
	rec := httptest.NewRecorder()
	m.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`scanwarden_destination_ok{destination="reception",device="MFP01"} 0`,
		`scanwarden_incidents_open 1`, `scanwarden_notifications_total{channel="webhook",event="incident.opened",result="ok"} 1`,
		`scanwarden_checks_total{cause="host-unreachable",reason="schedule"}`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// The API (package web) over the daemon's backends: anonymous refused,
	// a bearer token sees the destination's last verdict and the incident.
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/v1/devices"}, {"GET", "/api/v1/destinations"}, {"POST", "/api/v1/destinations/reception/check"},
		{"GET", "/api/v1/incidents"}, {"GET", "/api/v1/incidents?state=open"}, {"GET", "/api/v1/events"}, {"GET", "/metrics"},
		{"GET", "/debug/pprof/"},
	} {
		req, _ := http.NewRequest(r.method, base+r.path, nil)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusSeeOther {
			t.Errorf("anonymous %s %s: %d", r.method, r.path, resp.StatusCode)
		}
	}
	token, err := web.CreateToken(context.Background(), m.Store().Auth(), "test", "admin", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	api := func(method, path string, out any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		if strings.Contains(string(b), "pw-never-shown") {
			t.Fatalf("%s %s shows the password", method, path)
		}
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, b)
			}
		}
	}
	var dl struct{ Destinations []registry.DestinationView }
	api("GET", "/api/v1/destinations", &dl)
	dests := dl.Destinations
	if len(dests) != 1 || dests[0].Last == nil || dests[0].Last.Verdict.Cause != "host-unreachable" || dests[0].OpenIncident == 0 || !dests[0].PasswordSet {
		t.Fatalf("destinations %+v", dests)
	}
	var il struct{ Incidents []incident.View }
	api("GET", "/api/v1/incidents?state=open", &il)
	incs2 := il.Incidents
	if len(incs2) != 1 || len(incs2[0].Timeline) < 3 || incs2[0].Cause != "host-unreachable" {
		t.Fatalf("incidents %+v", incs2)
	}
	var rep smbcheck.Report
	api("POST", "/api/v1/destinations/reception/check", &rep)
	if rep.Verdict.Cause != "host-unreachable" {
		t.Fatalf("check now: %+v", rep.Verdict)
	}
	api("GET", "/metrics", nil)
	var dv struct{ Devices []registry.DeviceView }
	api("GET", "/api/v1/devices", &dv)
	devs := dv.Devices
	if len(devs) != 1 || devs[0].Name != "MFP01" {
		t.Fatalf("devices %+v", devs)
	}

	t0 := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("close took %v", d)
	}
	if strings.Contains(logs.String(), "pw-never-shown") || strings.Contains(logs.String(), "hook-s3cret") {
		t.Fatal("a secret reached the log")
	}
}

// A reload with a bad file keeps the running config and states the fault;
// a good one takes effect.
func TestReload(t *testing.T) {
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	good, _ := os.ReadFile(cfg.File)
	os.WriteFile(cfg.File, append(append([]byte(nil), good...), []byte("max_concurent = 3\n")...), 0o600)
	if err := m.Reload(); err == nil {
		t.Fatal("bad reload accepted")
	}
	if m.live.get().cfg.Checks.Interval.D() != time.Hour || len(m.Faults()) != 1 || m.Faults()[0].Part != "config" ||
		!strings.Contains(m.Faults()[0].Message, "checks.max_concurent") {
		t.Fatalf("after bad reload: %+v faults %+v", m.live.get().cfg.Checks, m.Faults())
	}
	os.WriteFile(cfg.File, bytes.Replace(good, []byte(`"1h"`), []byte(`"30m"`), 1), 0o600)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if m.live.get().cfg.Checks.Interval.D() != 30*time.Minute || len(m.Faults()) != 0 || m.Monitor() == nil {
		t.Fatalf("after good reload: %+v faults %+v", m.live.get().cfg.Checks, m.Faults())
	}
}

// systemd hears READY=1 at start and STOPPING=1 at stop.
func TestSDNotify(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	env := map[string]string{"NOTIFY_SOCKET": sock, "WATCHDOG_USEC": "200000"}
	m := &Main{Config: new(testConfig(t, "")), Stderr: io.Discard, Getenv: func(k string) string { return env[k] }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		buf := make([]byte, 512)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	if got := read(); !strings.HasPrefix(got, "READY=1\nSTATUS=") {
		t.Fatalf("first message %q", got)
	}
	if got := read(); !strings.HasPrefix(got, "WATCHDOG=1") {
		t.Fatalf("second message %q", got)
	}
	m.Close()
	for {
		if got := read(); got == "STOPPING=1" {
			break
		}
	}
}

// The watchdog is petted only after the store answers: once the store is
// gone, each tick logs that it was not petted and systemd hears nothing
// (it will restart the daemon).
func TestWatchdogNeedsStore(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	env := map[string]string{"NOTIFY_SOCKET": sock, "WATCHDOG_USEC": "100000"}
	var log syncBuffer
	m := &Main{Config: new(testConfig(t, "")), Stderr: &log, Getenv: func(k string) string { return env[k] }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// read returns the datagrams already queued (none within 50 ms: done).
	read := func() (msgs []string) {
		buf := make([]byte, 512)
		for {
			conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := conn.Read(buf)
			if err != nil {
				return msgs
			}
			msgs = append(msgs, string(buf[:n]))
		}
	}
	waitUntil(t, 5*time.Second, "a first WATCHDOG=1", func() bool { return slices.ContainsFunc(read(), isWatchdog) })
	m.st.Close()
	notPetted := func() int { return strings.Count(log.String(), "systemd watchdog not petted") }
	waitUntil(t, 5*time.Second, "a tick refused", func() bool { return notPetted() >= 1 })
	read() // what the ticks before the store went sent
	n := notPetted()
	waitUntil(t, 5*time.Second, "a further tick refused", func() bool { return notPetted() > n })
	if msgs := read(); slices.ContainsFunc(msgs, isWatchdog) {
		t.Fatalf("watchdog petted without a store: %q", msgs)
	}
}

func isWatchdog(msg string) bool { return strings.HasPrefix(msg, "WATCHDOG=1") }

// SIGTERM during a check: the daemon stops within 10 s even when the file
// server accepts the connection and never answers (a tarpit on loopback),
// and the interrupted check is not stored as a finding.
func TestStopDuringCheck(t *testing.T) {
	tarpit, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tarpit.Close()
	var held []net.Conn
	var hmu sync.Mutex
	go func() {
		for {
			c, err := tarpit.Accept()
			if err != nil {
				return
			}
			hmu.Lock()
			held = append(held, c)
			hmu.Unlock()
		}
	}()
	defer func() {
		hmu.Lock()
		for _, c := range held {
			c.Close()
		}
		hmu.Unlock()
	}()
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\njitter = \"1h\"\ntimeout = \"2m\"\n")
	st, err := store.OpenDir(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	st.UnlockKey(context.Background(), filepath.Join(cfg.DataDir, "secret.key"))
	st.Destinations().PutDestination(context.Background(), registry.Destination{Name: "slow", Host: "127.0.0.1", Port: tarpit.Addr().(*net.TCPAddr).Port,
		Share: "scans", User: "scan", Password: scanwarden.NewSecret("x"), Source: registry.SourceAdded})
	st.Close()
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }, Drain: time.Second}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := m.Monitor().CheckNow(context.Background(), "slow", nil)
		errc <- err
	}()
	waitUntil(t, 5*time.Second, "the check running", func() bool { return m.Monitor().Stats().Running == 1 })
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	m.Close()
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("stop took %v", d)
	}
	if err := <-errc; err == nil {
		t.Fatal("the interrupted check reported success")
	}
	st, _ = store.OpenDir(context.Background(), cfg.DataDir)
	defer st.Close()
	if _, ok, _ := st.Reports().LatestReport(context.Background(), "slow"); ok {
		t.Fatal("an interrupted check was stored")
	}
}

// [receiver] enabled runs the fallback share inside serve: its smbd is up,
// the status and the queue metric show it. (Real smbd: needs root.)
func TestReceiverInServe(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/testparm"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba not installed: "+p)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Serve-25\n"), 0o600)
	cfg := testConfig(t, "[receiver]\nenabled = true\nlisten = \"127.0.0.1:"+strconv.Itoa(port)+"\"\naccount = \"mfpserve\"\npassword_file = \""+pw+"\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m.recv == nil {
		t.Fatalf("receiver not running: faults %+v", m.Faults())
	}
	st, err := m.recv.backend().Status(context.Background())
	if err != nil || !st.Enabled || st.Fault != "" {
		t.Fatalf("receiver: %+v %v faults %+v", st, err, m.Faults())
	}
	rs, _ := m.recv.r.Status(context.Background())
	m.Close()
	// smbd is kept across daemon restarts; this test ends it (by its pid).
	if rs.SmbdPid > 0 {
		if p, err := os.FindProcess(rs.SmbdPid); err == nil {
			p.Signal(syscall.SIGTERM)
			waitUntil(t, 10*time.Second, "smbd and its children to exit", func() bool { return syscall.Kill(-p.Pid, 0) != nil })
		}
	}
}

// mailPeer is a real SMTP server (emersion/go-smtp) on loopback.
type mailPeer struct {
	mu   sync.Mutex
	msgs []string
}

func (p *mailPeer) NewSession(*smtp.Conn) (smtp.Session, error) { return &mailSess{p}, nil }

type mailSess struct{ p *mailPeer }

func (s *mailSess) Reset()                               {}
func (s *mailSess) Logout() error                        { return nil }
func (s *mailSess) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailSess) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *mailSess) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	s.p.mu.Lock()
	s.p.msgs = append(s.p.msgs, string(b))
	s.p.mu.Unlock()
	return err
}

// [notify] smtp_*: an incident reaches the admin by mail too.
func TestMailNotification(t *testing.T) {
	peer := &mailPeer{}
	srv := smtp.NewServer(peer)
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\njitter = \"0s\"\n[notify]\nsmtp_host = \"127.0.0.1\"\nsmtp_port = "+
		strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)+"\nsmtp_tls = \"none\"\nsmtp_from = \"scanwarden@office.test\"\nmail_to = [\"admin@office.test\"]\n")
	st, err := store.OpenDir(context.Background(), cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	st.UnlockKey(context.Background(), filepath.Join(cfg.DataDir, "secret.key"))
	st.Destinations().PutDestination(context.Background(), registry.Destination{Name: "reception", Host: "127.0.0.1", Port: closedPort,
		Share: "scans", User: "scan", Password: scanwarden.NewSecret("x"), Source: registry.SourceAdded})
	st.Close()
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	waitUntil(t, 15*time.Second, "the mail", func() bool {
		peer.mu.Lock()
		defer peer.mu.Unlock()
		return len(peer.msgs) > 0
	})
	peer.mu.Lock()
	got := peer.msgs[0]
	peer.mu.Unlock()
	if !strings.Contains(got, "Subject: [scanwarden] reception opened: host-unreachable (panel 2101)") {
		t.Fatalf("mail:\n%s", got)
	}
}
