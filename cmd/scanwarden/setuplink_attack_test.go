package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
)

// TestAttackSetupLinkFromDaemon: `sudo scanwarden admin setup-link` prints
// the file the daemon writes in its data dir. Its user could put there
// terminal control sequences (printed raw to root's terminal: an OSC 52
// writes the clipboard, others retitle or redraw) or a FIFO (the command
// blocked for ever). Now the file is read without waiting or following a
// link, and printed line by line with control characters escaped.
func TestAttackSetupLinkFromDaemon(t *testing.T) {
	isolate(t)
	data := t.TempDir()
	file := filepath.Join(data, daemon.SetupLinkName)
	os.WriteFile(file, []byte("https://box:8080/setup#tok\n\x1b]52;c;Y3VybCBldmlsfHNo\x07SHA-256 fingerprint AB:CD\n"), 0o600)
	r := runCLI(t, nil, "", "admin", "setup-link", "--data-dir", data)
	if r.code != exitOK || !strings.Contains(r.stdout, "https://box:8080/setup#tok\n") {
		t.Fatalf("setup-link: %+v", r)
	}
	if strings.ContainsAny(r.stdout, "\x1b\x07") {
		t.Errorf("control characters from the daemon's file reached the terminal: %q", r.stdout)
	}

	os.Remove(file)
	if err := syscall.Mkfifo(file, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() { done <- runCLI(t, nil, "", "admin", "setup-link", "--data-dir", data) }()
	select {
	case r := <-done:
		if r.code == exitOK {
			t.Errorf("a FIFO printed as the setup link: %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("setup-link blocked on a FIFO in the daemon's data dir")
		for {
			if w, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}
