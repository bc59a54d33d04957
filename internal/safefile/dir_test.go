package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDirRefusesLinksAndWaits: below a Dir nothing is followed as a link
// (at the file or at a folder on the way), nothing lies above it, a FIFO
// does not block the open and is no regular file, a hard link is refused —
// through openat2 and through the walk kept for kernels without it.
func TestDirRefusesLinksAndWaits(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o700)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("root's"), 0o600)
	data := filepath.Join(base, "data")
	os.MkdirAll(filepath.Join(data, "held", "day"), 0o700)
	os.WriteFile(filepath.Join(data, "held", "day", "scan.pdf"), []byte("%PDF"), 0o600)
	os.Symlink(outside, filepath.Join(data, "held", "link"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(data, "held", "file"))
	syscall.Mkfifo(filepath.Join(data, "held", "fifo"), 0o600)
	os.Link(filepath.Join(data, "held", "day", "scan.pdf"), filepath.Join(data, "held", "hard"))
	d, err := OpenDir(data)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	open := map[string]func(rel string) (int, error){
		"openat2": func(rel string) (int, error) { return d.openat(rel, unix.O_RDONLY, 0) },
		"walk": func(rel string) (int, error) {
			return d.walk(filepath.Clean(rel), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		},
	}
	for how, open := range open {
		fd, err := open("held/day/scan.pdf")
		if err != nil {
			t.Fatalf("%s: a plain file: %v", how, err)
		}
		unix.Close(fd)
		for _, rel := range []string{"held/link/secret", "held/file", "../outside/secret"} {
			if fd, err := open(rel); err == nil {
				unix.Close(fd)
				t.Errorf("%s: %s opened", how, rel)
			}
		}
	}
	for rel, want := range map[string]string{"held/fifo": "a FIFO", "held/hard": "hard link", "held/day": "a folder",
		"held/link/secret": ErrLink.Error(), "/etc/passwd": "not a path below"} {
		if f, _, err := d.OpenRegular(rel, os.O_RDONLY, 0); err == nil || !strings.Contains(err.Error(), want) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: %v, want %q", rel, err, want)
		}
	}
	if _, err := d.OpenDir("held/link"); !errors.Is(err, ErrLink) {
		t.Errorf("a folder that is a link: %v", err)
	}
}

// TestDirMkdirRename: folders made with mkdirat below the fd, a move
// between two folders' fds that never replaces a file.
func TestDirMkdirRename(t *testing.T) {
	base := t.TempDir()
	d, err := MkdirAll(filepath.Join(base, "data"), 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in, err := d.MkdirAll("inbox/front", 0o750)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	held, err := d.MkdirAll("held/2026-12-06", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	f, _, err := in.OpenRegular("a.pdf", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, err := in.OpenRegular("a.pdf", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); !errors.Is(err, os.ErrExist) {
		t.Errorf("O_EXCL over an existing file: %v", err)
	}
	os.WriteFile(filepath.Join(base, "data", "held", "2026-12-06", "taken"), nil, 0o600)
	if err := Rename(in, "a.pdf", held, "taken"); !errors.Is(err, os.ErrExist) {
		t.Errorf("a rename over an existing file: %v", err)
	}
	if err := Rename(in, "a.pdf", held, "x.pdf"); err != nil {
		t.Fatal(err)
	}
	if st, err := d.Lstat("held/2026-12-06/x.pdf"); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Errorf("moved: %v", err)
	}
	os.Symlink(base, filepath.Join(base, "data", "held", "evil"))
	if _, err := d.MkdirAll("held/evil/x", 0o700); !errors.Is(err, ErrLink) {
		t.Errorf("mkdir through a link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "x")); err == nil {
		t.Error("a folder was made through the link")
	}
}
