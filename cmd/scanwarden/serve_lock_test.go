package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

// serveProcess starts `scanwarden serve --config cfg` as its own process
// (this test binary running main); it is killed when the test ends.
func serveProcess(t *testing.T, cfg string) (*exec.Cmd, *syncBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), mainEnv+"=1", "SCANWARDEN_KEY_FILE=")
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	return cmd, stderr, done
}

// The test, with real processes: a second serve on the same data
// dir (another port) and a serve on the port the first listens on (another
// data dir) both exit non-zero within seconds, naming the first's address
// and pid; the first is untouched: /healthz answers and its scheduler
// checks on (a new report after both attempts).
func TestServeOneDaemonPerDataDir(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	st, err := store.OpenDir(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UnlockKey(context.Background(), filepath.Join(data, "secret.key")); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if err := st.Destinations().PutDestination(context.Background(), registry.Destination{Name: "refused", Host: "127.0.0.1", Port: closed,
		Share: "scans", User: "scan", Password: scanwarden.NewSecret("x"), Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	conf := "[checks]\ninterval = \"10s\"\njitter = \"0s\"\n"
	first := filepath.Join(dir, "first.toml")
	os.WriteFile(first, []byte("data_dir = \""+data+"\"\nlisten = \"127.0.0.1:0\"\n"+conf), 0o600)
	_, firstErr, firstDone := serveProcess(t, first)

	// The first's address, from its lock file.
	var addr string
	deadline := time.Now().Add(20 * time.Second)
	for addr == "" {
		b, _ := os.ReadFile(filepath.Join(data, daemon.LockFile))
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "listen "); ok {
				addr = v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first serve wrote no listen address; stderr:\n%s", firstErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	reports := func() int {
		st, err := store.OpenReadOnly(context.Background(), filepath.Join(data, store.DefaultFile))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rs, err := st.Reports().Reports(context.Background(), "refused", 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}

	// Its first check is stored before the others start.
	for reports() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the first serve made no check; stderr:\n%s", firstErr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	second := filepath.Join(dir, "second.toml")
	os.WriteFile(second, []byte("data_dir = \""+data+"\"\nlisten = \"127.0.0.1:0\"\n"+conf), 0o600)
	taken := filepath.Join(dir, "taken.toml")
	os.WriteFile(taken, []byte("data_dir = \""+filepath.Join(dir, "other")+"\"\nlisten = \""+addr+"\"\n"+conf), 0o600)
	for _, c := range []struct{ name, cfg, want string }{
		{"same data dir", second, "its page listens on " + addr},
		{"taken port", taken, "listen = " + addr},
	} {
		t0 := time.Now()
		_, stderr, done := serveProcess(t, c.cfg)
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s: exit 0; stderr:\n%s", c.name, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("%s: stderr does not say %q:\n%s", c.name, c.want, stderr.String())
			}
			t.Logf("%s: %v after %v: %s", c.name, err, time.Since(t0).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still running after 10 s; stderr:\n%s", c.name, stderr.String())
		}
	}
	select {
	case err := <-firstDone:
		t.Fatalf("the first serve ended: %v\n%s", err, firstErr.String())
	default:
	}
	// The commands that open the data dir beside serve (root's among them)
	// are not held up by its lock.
	for _, args := range [][]string{{"destination", "list", "--data-dir", data}, {"admin", "setup-link", "--data-dir", data}} {
		var out, errb bytes.Buffer
		t0 := time.Now()
		if code := run(context.Background(), args, nil, &out, &errb); code != exitOK || time.Since(t0) > 5*time.Second {
			t.Fatalf("%v beside serve: exit %d after %v: %s%s", args, code, time.Since(t0), out.String(), errb.String())
		}
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("the first serve's /healthz: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "ok") {
		t.Fatalf("healthz %q", body)
	}
	n := reports()
	deadline = time.Now().Add(30 * time.Second)
	for reports() <= n {
		if time.Now().After(deadline) {
			t.Fatalf("the first serve's scheduler made no check after the attempts (%d reports); stderr:\n%s", n, firstErr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
