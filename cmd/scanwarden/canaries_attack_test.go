package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestAttackCanaryJournal: the check's canary journal lies in the data
// dir, which the daemon's user writes, and root's `scanwarden check` uses
// it. The daemon could make the journal folder a symbolic link to a folder
// of root's (/etc/cron.d): root then wrote its journal files there, 0600
// and root's — with a destination path holding a line break, a cron line
// of the daemon's choosing. Or put a FIFO in it: the next check blocked
// reading it. Now the folder is not followed when a link, a file in it is
// read without waiting, and a folder or name with a line break is refused.
func TestAttackCanaryJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rootDir := filepath.Join(dir, "cron.d") // stands for a folder of root's
	os.Mkdir(rootDir, 0o755)
	journal := filepath.Join(dir, "data", "canaries")
	os.MkdirAll(filepath.Dir(journal), 0o700)
	if err := os.Symlink(rootDir, journal); err != nil {
		t.Fatal(err)
	}
	j := dirCanaries{journal}
	err := j.Record(ctx, `\\fs\scans`+"\n* * * * * root id > /tmp/pwned\n", "canary.tmp")
	ents, _ := os.ReadDir(rootDir)
	if len(ents) > 0 {
		b, _ := os.ReadFile(filepath.Join(rootDir, ents[0].Name()))
		t.Errorf("the journal wrote through a link into another folder (err %v): %s: %q", err, ents[0].Name(), b)
	}
	if err := j.Record(ctx, `\\fs\scans`, "canary.tmp"); err == nil {
		t.Error("a journal folder that is a symbolic link was used")
	}

	// a FIFO among the journal's files
	os.Remove(journal)
	j = dirCanaries{filepath.Join(dir, "data", "canaries2")}
	if err := j.Record(ctx, `\\fs\scans`, "a.tmp"); err != nil {
		t.Fatal(err)
	}
	if err := j.Record(ctx, `\\fs\scans`+"\nx", "b.tmp"); err == nil {
		t.Error("a folder with a line break was journaled")
	}
	fifo := filepath.Join(j.dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { left, _ := j.Left(ctx, `\\fs\scans`); done <- left }()
	select {
	case left := <-done:
		if len(left) != 1 || left[0] != "a.tmp" {
			t.Errorf("left %v", left)
		}
	case <-time.After(10 * time.Second):
		t.Error("the journal's sweep blocked on a FIFO")
		for {
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
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
