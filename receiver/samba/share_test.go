package samba

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/scanwarden/scanwarden/testlab"
)

func TestParseAllow(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       string // prefixes joined, or the error's substring after "!"
	}{
		{"addresses and networks", "# c\n\n192.168.10.5\n10.0.0.0/8\n 2001:db8::/32 \n192.168.1.7/24\n", "192.168.10.5/32 10.0.0.0/8 2001:db8::/32 192.168.1.0/24"},
		{"root preexec", "192.168.10.5\n\troot preexec = /bin/sh -c id\n", `!line 2: "root preexec = /bin/sh -c id"`},
		{"a section", "[global]\n", `!line 1: "[global]"`},
		{"two words", "10.0.0.1 10.0.0.2\n", `!line 1`},
		{"a name", "mfp.example\n", `!"mfp.example"`},
		{"a zone", "fe80::1%eth0\n", `!"fe80::1%eth0"`},
		{"empty", "# nothing\n", "!no address"},
		{"too big", strings.Repeat("#\n", maxAllowBytes), "!more than an allowlist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseAllow("F", []byte(c.text))
			if want, isErr := strings.CutPrefix(c.want, "!"); isErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want one naming %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, p := range got {
				s = append(s, p.String())
			}
			if strings.Join(s, " ") != c.want {
				t.Errorf("got %v, want %s", s, c.want)
			}
		})
	}
}

// TestAttackAllowFileOpen: root reads the daemon's file only as the daemon's
// regular file, reached without a symlink: a symlink (at the file or at a
// folder above it), a hard link to a file of root's, a FIFO (would block), a
// file of another user's are each refused with the reason. doctor's reader
// (openBelowDir) refuses the same links, hard links and FIFO at the file and
// its folder, and checks no owner: another user's file, or one below a
// folder all may write, it reads (root refuses them and says why in
// RefusedFile).
func TestAttackAllowFileOpen(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "owners other than ours need root")
	}
	const daemon = 4242 // a uid standing for the daemon's user
	base := t.TempDir()
	rootFile := filepath.Join(base, "root-file")
	os.WriteFile(rootFile, []byte("10.0.0.1\n"), 0o600)
	dir := filepath.Join(base, "d")
	os.Mkdir(dir, 0o700)
	os.Chown(dir, daemon, daemon)
	good := filepath.Join(dir, "allow")
	os.WriteFile(good, []byte("10.0.0.1\n"), 0o644)
	os.Chown(good, daemon, daemon)
	for name, open := range map[string]func(string) (*os.File, error){"root's": rootOpener(daemon), "doctor's": openBelowDir} {
		if _, _, err := readAllowFile(good, open); err != nil {
			t.Fatalf("the daemon's own file, %s reader: %v", name, err)
		}
	}
	link := filepath.Join(dir, "link")
	os.Symlink(rootFile, link)
	os.Lchown(link, daemon, daemon)
	hard := filepath.Join(dir, "hard")
	if err := os.Link(rootFile, hard); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	os.Chown(fifo, daemon, daemon)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("10.0.0.1\n"), 0o644)
	os.Chown(other, daemon+1, daemon+1)
	twice := filepath.Join(dir, "twice")
	os.WriteFile(twice, []byte("10.0.0.1\n"), 0o644)
	os.Chown(twice, daemon, daemon)
	os.Link(twice, twice+"2")
	dirLink := filepath.Join(base, "dl")
	os.Symlink(dir, dirLink)
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	inOpen := filepath.Join(open, "allow")
	os.WriteFile(inOpen, []byte("10.0.0.1\n"), 0o644)
	os.Chown(inOpen, daemon, daemon)
	for _, c := range []struct {
		name, path, want string
		below            string // doctor's reader: "" reads the file
	}{
		{"symlink to a root file", link, "symbolic link", "symbolic link"},
		{"hard link to a root file", hard, "belongs to uid 0", "a hard link"},
		{"fifo", fifo, "not a regular file", "a FIFO"},
		{"another user's file", other, "belongs to uid 4243", ""},
		{"two links", twice, "hard links", "a hard link"},
		{"a folder above is a symlink", filepath.Join(dirLink, "allow"), "symbolic link", "symbolic link"},
		{"a folder above is writable by all", inOpen, "writable by others", ""},
	} {
		_, _, err := readAllowFile(c.path, rootOpener(daemon))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
		_, _, err = readAllowFile(c.path, openBelowDir)
		if c.below == "" && err != nil || c.below != "" && (err == nil || !strings.Contains(err.Error(), c.below)) {
			t.Errorf("%s, doctor's reader: err = %v, want %q", c.name, err, c.below)
		}
	}
	if b, _ := os.ReadFile(rootFile); string(b) != "10.0.0.1\n" {
		t.Errorf("root file changed")
	}
	if err := checkRootDir(dir); err == nil || !strings.Contains(err.Error(), "belongs to uid 4242") {
		t.Errorf("checkRootDir on the daemon's folder: %v", err)
	}
	if err := checkRootDir(dirLink); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("checkRootDir on a symlink: %v", err)
	}
	if err := checkRootDir(filepath.Join(base, "new")); err != nil {
		t.Errorf("checkRootDir on a new folder in root's: %v", err)
	}
}
