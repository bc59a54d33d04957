// Package attacker plays, in tests run as root, the daemon's own user
// against root's commands: an unprivileged account that owns the data dir
// and changes it while root works there (symbolic links, FIFOs, hard links,
// a link swapped in and out with renameat2(RENAME_EXCHANGE)). It is
// imported by tests only.
package attacker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Name is the account that plays the daemon's user.
const Name = "swdaemon"

// User is the daemon's account (made when missing); the test is skipped
// unless it runs as root.
func User(t testing.TB) (uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("root's commands against the daemon's user: run as root")
	}
	u, err := user.Lookup(Name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", Name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v %s", Name, err, out)
		}
		if u, err = user.Lookup(Name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// Own gives dir and everything below it to the daemon's user, and makes
// every folder above dir up to / reachable (as /var/lib is).
func Own(t testing.TB, dir string) {
	t.Helper()
	uid, gid := User(t)
	for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(p, fi.Mode().Perm()|0o005)
		}
	}
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, uid, gid)
		}
		return nil
	})
}

// Symlink makes link (the daemon's) point at target.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	uid, gid := User(t)
	os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	os.Lchown(link, uid, gid)
}

// Fifo makes path (the daemon's) a FIFO.
func Fifo(t testing.TB, path string) {
	t.Helper()
	uid, gid := User(t)
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Lchown(path, uid, gid)
}

// Unblock ends, for a while, any open of path (a FIFO) that waits for a
// writer or a reader: what a test does when root's command did block.
func Unblock(path string, d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		for _, fl := range []int{os.O_WRONLY, os.O_RDONLY} {
			if f, err := os.OpenFile(path, fl|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
	}
}

// envSwap carries the swap's arguments to the child.
const envSwap = "SCANWARDEN_ATTACKER_SWAP"

// Swap starts, as the daemon's user, a process that swaps a symbolic link
// to target (one of root's files) in and out of name, a file root's command
// uses, as fast as it can (renameat2 RENAME_EXCHANGE with a link of its own
// beside it; whichever of the two root's command removed is put back: an
// empty file at name, a new link beside it), for at most d or max
// exchanges. stop ends it and says how many exchanges it made. The test
// package must have a test that calls Child (its binary is the child).
func Swap(t testing.TB, name, target string, d time.Duration, max int) (stop func() int) {
	t.Helper()
	uid, gid := User(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "attacker.test")
	copyFile(t, exe, bin)
	Own(t, filepath.Dir(bin))
	out := filepath.Join(filepath.Dir(bin), "count")
	ctx, cancel := context.WithTimeout(context.Background(), d+5*time.Second)
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestAttackerChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envSwap+"="+strings.Join([]string{name, target, d.String(), strconv.Itoa(max), out}, "\n"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := false
	return func() int {
		if !done {
			done = true
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
			cancel()
		}
		b, _ := os.ReadFile(out)
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Child is the swapping process's body when the test binary runs as the
// child of Swap; otherwise it returns at once.
func Child() {
	v := os.Getenv(envSwap)
	if v == "" {
		return
	}
	f := strings.Split(v, "\n")
	if len(f) != 5 {
		os.Exit(2)
	}
	d, _ := time.ParseDuration(f[2])
	max, _ := strconv.Atoi(f[3])
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	name, target := f[0], f[1]
	link := filepath.Join(filepath.Dir(name), ".attacker-link")
	n := 0
	for end := time.Now().Add(d); n < max && time.Now().Before(end); {
		select {
		case <-term:
			end = time.Now()
			continue
		default:
		}
		err := unix.Renameat2(unix.AT_FDCWD, link, unix.AT_FDCWD, name, unix.RENAME_EXCHANGE)
		switch {
		case err == nil:
			n++
		case errors.Is(err, unix.ENOENT):
			if _, err := os.Lstat(link); err != nil {
				os.Symlink(target, link)
			}
			if _, err := os.Lstat(name); err != nil {
				if f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
					f.Close()
				}
			}
		default:
			fmt.Fprintln(os.Stderr, "attacker: exchange:", err)
			end = time.Now()
		}
	}
	os.WriteFile(f[4], []byte(strconv.Itoa(n)), 0o644)
	os.Exit(0)
}
