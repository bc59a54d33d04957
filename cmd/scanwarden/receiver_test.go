package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReceiverBadArguments(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", []string{"receiver"}, "usage"},
		{"unknown command", []string{"receiver", "frob"}, "frob"},
		{"no listen", []string{"receiver", "run", "--data-dir", dir, "--password-file", pw}, "--listen"},
		{"listen a name", []string{"receiver", "run", "--data-dir", dir, "--listen", "fileserver:445", "--password-file", pw}, "not an IP"},
		{"listen bad port", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1:99999", "--password-file", pw}, "bad port"},
		{"no password", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1"}, "--password-file"},
		{"bad account", []string{"receiver", "run", "--data-dir", dir, "--listen", "127.0.0.1:4455", "--password-file", pw, "--account", "Bad Name"}, "account"},
		{"force without id", []string{"receiver", "force", "--data-dir", dir}, "ID"},
		{"two destinations", []string{"receiver", "deliver", "a", "b", "--data-dir", dir}, "one destination"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SCANWARDEN_RECEIVER_PASSWORD", "")
			r := runCLI(t, nil, "", tc.args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr does not name %q: %s", tc.want, r.stderr)
			}
		})
	}
}

func TestReceiverListStatusEmpty(t *testing.T) {
	dir := t.TempDir()
	r := runCLI(t, nil, "", "receiver", "list", "--json", "--data-dir", dir)
	var rows []map[string]any
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &rows) != nil || len(rows) != 0 {
		t.Fatalf("list: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, "", "receiver", "status", "--json", "--data-dir", dir)
	var st map[string]any
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &st) != nil || st["smbd_up"] != false {
		t.Fatalf("status: %d %q %s", r.code, r.stdout, r.stderr)
	}
	for _, k := range []string{"smbd_up", "port", "smb1", "inbox", "counts", "held_bytes", "oldest_held", "last_delivery_error", "warnings"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status JSON lacks %q", k)
		}
	}
}
