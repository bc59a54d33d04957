package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

func TestServeConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("listen = \"127.0.0.1:8080\"\n\n[checks]\nmax_concurrent = 0\n"), 0o600)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "--config", bad}, nil, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "bad.toml:4: checks.max_concurrent = 0: 1..64") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("data_dir = \""+filepath.Join(dir, "data")+"\"\n"), 0o600)
	out.Reset()
	if code := run(context.Background(), []string{"serve", "--config", good, "--check-config"}, nil, &out, &errb); code != exitOK ||
		!strings.Contains(out.String(), "config ok") {
		t.Fatalf("check-config: %d %q", code, out.String())
	}
}

func TestNotifyTestSend(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "s.toml")
	os.WriteFile(cfg, []byte("[notify]\nwebhook_url = \""+srv.URL+"/h\"\n"), 0o600)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"notify", "test", "--config", cfg}, nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s %s", code, out.String(), errb.String())
	}
	if got["event"] != "incident.opened" || got["test"] != true || !strings.Contains(out.String(), "webhook: delivered") {
		t.Fatalf("got %v, out %q", got, out.String())
	}
	none := filepath.Join(dir, "none.toml")
	os.WriteFile(none, []byte("log_level = \"info\"\n"), 0o600)
	if code := run(context.Background(), []string{"notify", "test", "--config", none}, nil, &out, &errb); code != exitUsage {
		t.Fatalf("no channel: exit %d", code)
	}
	srv.Close()
	out.Reset()
	os.WriteFile(cfg, []byte("[notify]\nwebhook_url = \""+srv.URL+"/h\"\nwebhook_attempts = 1\n"), 0o600)
	if code := run(context.Background(), []string{"notify", "test", "--config", cfg}, nil, &out, &errb); code != exitFinding ||
		!strings.Contains(out.String(), "webhook: failed") {
		t.Fatalf("down: exit %d %q", code, out.String())
	}
}

// The real process: SIGHUP with a bad file keeps it running on the old
// config; SIGTERM while a check hangs on a server that never answers (a
// loopback tarpit) ends it within 10 s, exit 0.
func TestServeSignals(t *testing.T) {
	tarpit, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tarpit.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := tarpit.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	st, err := store.OpenDir(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UnlockKey(context.Background(), filepath.Join(data, "secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := st.Destinations().PutDestination(context.Background(), registry.Destination{Name: "slow", Host: "127.0.0.1",
		Port: tarpit.Addr().(*net.TCPAddr).Port, Share: "scans", User: "scan", Password: scanwarden.NewSecret("x"),
		Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	cfg := filepath.Join(dir, "serve.toml")
	good := "data_dir = \"" + data + "\"\nlisten = \"127.0.0.1:0\"\n[checks]\ninterval = \"1h\"\njitter = \"0s\"\ntimeout = \"2m\"\n"
	os.WriteFile(cfg, []byte(good), 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), mainEnv+"=1", "SCANWARDEN_KEY_FILE=")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
	}()
	select {
	case c := <-accepted: // the scheduled check hangs in the tarpit
		accepted <- c
	case <-time.After(20 * time.Second):
		t.Fatalf("no check reached the tarpit; stderr:\n%s", stderr.String())
	}
	os.WriteFile(cfg, []byte(good+"bogus = 1\n"), 0o600)
	cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "config reload refused") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload refusal; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "bogus") {
		t.Fatalf("the refusal does not name the key:\n%s", stderr.String())
	}
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
		if d := time.Since(sent); d > 10*time.Second {
			t.Fatalf("SIGTERM to exit took %v", d)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15 s after SIGTERM:\n%s", stderr.String())
	}
}
