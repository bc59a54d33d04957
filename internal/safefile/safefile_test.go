package safefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("data"), 0o600)
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	if b, err := Read(good, 4); err != nil || string(b) != "data" {
		t.Fatalf("a regular file: %q %v", b, err)
	}
	for name, c := range map[string]struct {
		path string
		max  int64
		want string
	}{
		"a FIFO": {fifo, 10, "not a regular file"}, "a symlink": {link, 10, "too many levels"}, "too big": {good, 3, "more than 3 bytes"},
		"a folder": {dir, 10, "not a regular file"},
	} {
		if _, err := Read(c.path, c.max); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
