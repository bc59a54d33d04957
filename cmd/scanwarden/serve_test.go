package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
