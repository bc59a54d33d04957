package daemon

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: what serve writes to the slave (its
// console when run by hand) is read from the master.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// TestSetupLinkOnTheConsole: serve run by hand on loopback prints the
// one-time setup link on its console (a terminal); to a log (not a
// terminal) it prints only where the file is, never the token.
func TestSetupLinkOnTheConsole(t *testing.T) {
	master, slave := openPTY(t)
	cfg := testConfig(t, "")
	cfg.Listen = "127.0.0.1:0"
	m := &Main{Config: &cfg, Stderr: slave, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got := make(chan string, 1)
	go func() {
		var out strings.Builder
		buf := make([]byte, 4096)
		master.SetReadDeadline(time.Now().Add(10 * time.Second))
		for !strings.Contains(out.String(), "set-password") {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				break
			}
		}
		got <- out.String()
	}()
	out := <-got
	if !regexp.MustCompile(`http://127\.0\.0\.1:\d+/setup\?token=[A-Za-z0-9_-]+`).MatchString(out) {
		t.Fatalf("the console shows no setup link:\n%s", out)
	}

	// The same to a log: the file's place, no token.
	cfg2 := testConfig(t, "")
	cfg2.Listen = "127.0.0.1:0"
	_, logs := startMain(t, cfg2)
	waitUntil(t, 10*time.Second, "the setup notice", func() bool { return strings.Contains(logs.String(), "No admin password yet") })
	if strings.Contains(logs.String(), "token=") {
		t.Fatalf("the token reached a log that is not a terminal:\n%s", logs.String())
	}
}
