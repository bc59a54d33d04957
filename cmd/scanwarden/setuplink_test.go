package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
)

// TestAdminSetupLink: the daemon's setup link, printed by `admin
// setup-link` (and only there), works; set-password removes it.
func TestAdminSetupLink(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	conf := filepath.Join(dir, "serve.toml")
	os.WriteFile(conf, []byte("data_dir = \""+data+"\"\nlisten = \"127.0.0.1:0\"\n"), 0o600)
	cfg, err := config.Load(conf)
	if err != nil {
		t.Fatal(err)
	}
	m := &daemon.Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	r := runCLI(t, nil, "", "admin", "setup-link", "--data-dir", data)
	link := regexp.MustCompile(`http://127\.0\.0\.1:\d+/setup\?token=\S+`).FindString(r.stdout)
	if r.code != exitOK || link == "" {
		t.Fatalf("setup-link: %+v", r)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the printed link: %s", resp.Status)
	}

	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("a long admin password\n"), 0o600)
	if r := runCLI(t, nil, "", "admin", "set-password", "--data-dir", data, "--password-file", pw); r.code != exitOK {
		t.Fatalf("set-password: %+v", r)
	}
	r = runCLI(t, nil, "", "admin", "setup-link", "--data-dir", data)
	if r.code != exitUsage || !strings.Contains(r.stderr, "password is set") || strings.Contains(r.stdout, "token=") {
		t.Fatalf("setup-link after set-password: %+v", r)
	}
}
