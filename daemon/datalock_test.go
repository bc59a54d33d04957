package daemon

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func healthz(t *testing.T, m *Main) string {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + m.Addr().String() + "/healthz")
	if err != nil {
		t.Fatalf("the first daemon: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// A second serve on the same data dir (another port) does not start: the
// error names the first's pid and listen address; the first runs on. Once
// the first stops, the data dir is free again (its lock file stays).
func TestDataDirLock(t *testing.T) {
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\n")
	m, _ := startMain(t, cfg)
	second := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	t0 := time.Now()
	err := second.Open(context.Background())
	var he *HeldError
	if !errors.As(err, &he) || he.PID != os.Getpid() || he.Listen != m.Addr().String() {
		t.Fatalf("second serve: %v (%+v), want held by pid %d on %s", err, he, os.Getpid(), m.Addr())
	}
	if !strings.Contains(err.Error(), m.Addr().String()) || time.Since(t0) > 2*time.Second {
		t.Fatalf("error %q after %v", err, time.Since(t0))
	}
	if h := healthz(t, m); !strings.HasPrefix(h, "ok") || m.Monitor() == nil {
		t.Fatalf("the first daemon after the second's attempt: %q, monitor %v", h, m.Monitor())
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	third := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := third.Open(context.Background()); err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	third.Close()
}

// The lock file is opened without following a link or waiting on a FIFO,
// and must be the serving user's regular file: a data dir whose lock file
// is any of these is refused at once, nothing written through it.
func TestAttackDataDirLockFile(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep\n"), 0o600)
	cases := map[string]struct {
		plant func(path string) error
		want  string
	}{
		"a symlink":          {func(p string) error { return os.Symlink(victim, p) }, "symbolic link"},
		"a dangling symlink": {func(p string) error { return os.Symlink(victim+".new", p) }, "symbolic link"},
		"a FIFO":             {func(p string) error { return syscall.Mkfifo(p, 0o600) }, "not a regular file"},
		"a folder":           {func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory"},
	}
	if os.Geteuid() == 0 {
		cases["another user's file"] = struct {
			plant func(path string) error
			want  string
		}{func(p string) error {
			if err := os.WriteFile(p, nil, 0o666); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}, "belongs to uid 65534"}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := c.plant(filepath.Join(dir, LockFile)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				l, err := lockDataDir(dir)
				l.Close()
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v, want %q", err, c.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("blocked")
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
				t.Fatalf("the link's target was written: %q", b)
			}
			if _, err := os.Lstat(victim + ".new"); err == nil {
				t.Fatal("a file was made through the dangling link")
			}
		})
	}
}

// What a holder wrote is read bounded, and only a pid and a printable
// address are taken from it.
func TestDataDirLockInfo(t *testing.T) {
	dir := t.TempDir()
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, _ := os.OpenFile(filepath.Join(dir, LockFile), os.O_RDWR, 0)
	defer f.Close()
	for _, c := range []struct{ content, listen string }{
		{"pid 42\nlisten 10.0.0.1:8080\n", "10.0.0.1:8080"},
		{"pid 42\nlisten \x1b]52;c;aGk=\x07\n", ""},
		{"pid 42\n" + strings.Repeat("x", 10000) + "\nlisten 10.0.0.1:1\n", ""},
	} {
		f.Truncate(0)
		f.WriteAt([]byte(c.content), 0)
		_, err := lockDataDir(dir)
		var he *HeldError
		if !errors.As(err, &he) || he.PID != 42 || he.Listen != c.listen {
			t.Errorf("content %.40q: %v %+v, want listen %q", c.content, err, he, c.listen)
		}
	}
}

// A listen address that cannot be bound at start ends Open with a
// *BindError naming the key, the address and its holder (this test's
// process): the page's, the trap listener's, the mail
// listener's. The data dir is free again afterwards.
func TestPortTakenAtStartIsFatal(t *testing.T) {
	busyUDP, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busyUDP.Close()
	busyTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busyTCP.Close()
	comm := filepath.Join(t.TempDir(), "trap.community")
	os.WriteFile(comm, []byte("trap-secret\n"), 0o600)
	pid := "pid " + strconv.Itoa(os.Getpid())
	for _, c := range []struct {
		name, extra, key, addr string
	}{
		{"web", "", "listen", busyTCP.Addr().String()},
		{"traps", "[snmp]\ntrap_listen = \"" + busyUDP.LocalAddr().String() + "\"\ntrap_community_file = \"" + comm + "\"\n",
			"snmp.trap_listen", busyUDP.LocalAddr().String()},
		{"mail", "[snmp]\nsmtp_listen = \"" + busyTCP.Addr().String() + "\"\n", "snmp.smtp_listen", busyTCP.Addr().String()},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, c.extra)
			if c.name == "web" {
				cfg.Listen = c.addr
			}
			m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
			t0 := time.Now()
			err := m.Open(context.Background())
			var be *BindError
			if !errors.As(err, &be) || be.Key != c.key || be.Addr != c.addr || !errors.Is(err, syscall.EADDRINUSE) {
				m.Close()
				t.Fatalf("Open: %v, want a BindError for %s %s", err, c.key, c.addr)
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if !strings.Contains(err.Error(), pid) {
				t.Errorf("the error does not name the holder (%s): %v", pid, err)
			}
			t.Log(err)
			cfg.Listen = "127.0.0.1:0"
			cfg.SNMP.TrapListen, cfg.SNMP.SMTPListen = "", ""
			again := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
			if err := again.Open(context.Background()); err != nil {
				t.Fatalf("the data dir after a failed start: %v", err)
			}
			again.Close()
		})
	}
}

// After start, a reload whose trap listener cannot bind is a fault: the
// daemon runs on.
func TestPortTakenAtReloadIsAFault(t *testing.T) {
	busy, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	comm := filepath.Join(t.TempDir(), "trap.community")
	os.WriteFile(comm, []byte("trap-secret\n"), 0o600)
	cfg := testConfig(t, "")
	m, _ := startMain(t, cfg)
	good, _ := os.ReadFile(cfg.File)
	os.WriteFile(cfg.File, append(good, []byte("[snmp]\ntrap_listen = \""+busy.LocalAddr().String()+"\"\ntrap_community_file = \""+comm+"\"\n")...), 0o600)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	parts := map[string]bool{}
	for _, f := range m.Faults() {
		parts[f.Part] = true
	}
	if !parts["snmp.traps"] || m.Monitor() == nil {
		t.Fatalf("faults %+v", m.Faults())
	}
	if h := healthz(t, m); !strings.Contains(h, "1 fault") {
		t.Fatalf("healthz %q", h)
	}
}
