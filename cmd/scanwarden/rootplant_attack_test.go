package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/internal/attacker"
	"github.com/scanwarden/scanwarden/internal/webcert"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
)

// rootBox is an installed-shape box for root's commands: the daemon's data
// dir (owned by the daemon's user, with a database, a destination, an
// incomplete scan, receiver.json, the allowlist, a setup link, a web
// certificate, a canary journal), root's key and config outside it, and
// root's victims — a file (as /etc/passwd) and a root-only folder (as
// /etc/profile.d) — that nothing may change.
type rootBox struct {
	base, data, key, conf, victims string
	scanID                         int64
}

func newRootBox(t *testing.T) *rootBox {
	t.Helper()
	data, key := daemonData(t)
	b := &rootBox{base: filepath.Dir(data), data: data, key: key}
	ctx := context.Background()
	if r := runCLI(t, nil, "", "destination", "add", "front", "//127.0.0.1:1/scans", "--user", "alice", "--no-password",
		"--data-dir", data, "--key-file", key); r.code != exitOK {
		t.Fatalf("destination add: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "", "device", "add", "mfp01", "--data-dir", data, "--key-file", key); r.code != exitOK {
		t.Fatalf("device add: %d %s", r.code, r.stderr)
	}
	rx := filepath.Join(data, "receiver")
	inbox := filepath.Join(rx, "inbox", "front")
	os.MkdirAll(inbox, 0o750)
	os.MkdirAll(filepath.Join(rx, "held", time.Now().UTC().Format("2006-01-02")), 0o700)
	body := []byte("%PDF-1.4\nincomplete")
	os.WriteFile(filepath.Join(inbox, "x.pdf"), body, 0o640)
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	b.scanID, err = st.Scans().AddScan(ctx, receiver.Scan{Destination: "front", Folder: "front", File: "x.pdf", Size: int64(len(body)),
		SHA256: fmt.Sprintf("%x", sum), State: receiver.Incomplete, ReceivedAt: time.Now(), InboxPath: "inbox/front/x.pdf"})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(rx, "receiver.json"), []byte(`{"listen":"127.0.0.1","port":1,"share":"scans","account":"swmfp","external":true}`), 0o640)
	os.WriteFile(samba.AllowFile(rx), []byte("127.0.0.1\n"), 0o640)
	os.WriteFile(filepath.Join(data, daemon.SetupLinkName), []byte("https://127.0.0.1:1/setup#x\n"), 0o600)
	os.WriteFile(filepath.Join(data, webcert.CertName), []byte("not a certificate\n"), 0o644)
	os.MkdirAll(filepath.Join(data, "canaries"), 0o700)
	attacker.Own(t, data)

	smbd := filepath.Join(b.base, "smbd")
	os.Mkdir(smbd, 0o755)
	pw := filepath.Join(b.base, "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Plant-25\n"), 0o600)
	b.conf = filepath.Join(b.base, "scanwarden.toml")
	os.WriteFile(b.conf, []byte("data_dir = \""+data+"\"\nlisten = \"127.0.0.1:1\"\n[receiver]\nenabled = true\nlisten = \"127.0.0.1:1\"\n"+
		"account = \"swmfp\"\nexternal_smbd = true\nsmbd_dir = \""+smbd+"\"\npassword_file = \""+pw+"\"\n"), 0o644)
	b.victims = filepath.Join(b.base, "victims")
	os.MkdirAll(filepath.Join(b.victims, "rootonly"), 0o700)
	os.WriteFile(filepath.Join(b.victims, "passwd"), []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644)
	os.Chmod(filepath.Join(b.victims, "passwd"), 0o644)
	return b
}

// commands are root's commands on the box, as the README's table lists
// them.
func (b *rootBox) commands() [][]string {
	dk := []string{"--data-dir", b.data, "--key-file", b.key}
	return [][]string{
		{"receiver", "list", "--data-dir", b.data},
		{"receiver", "status", "--data-dir", b.data},
		{"receiver", "force", strconv.FormatInt(b.scanID, 10), "--data-dir", b.data},
		append([]string{"receiver", "deliver"}, dk...),
		{"receiver", "prepare", "--config", b.conf, "--user", attacker.Name},
		{"doctor", "--config", b.conf, "--key-file", b.key, "--timeout", "2s"},
		append([]string{"secrets", "rotate"}, dk...),
		{"admin", "setup-link", "--data-dir", b.data},
		append([]string{"status"}, dk...),
		append([]string{"destination", "list"}, dk...),
		append([]string{"destination", "show", "front"}, dk...),
		append([]string{"device", "list"}, dk...),
		append([]string{"device", "show", "mfp01"}, dk...),
		append([]string{"check", "--destination", "front"}, dk...),
	}
}

// snapshot is what the victims are: every name's mode, owner and bytes.
func (b *rootBox) snapshot() string {
	var s strings.Builder
	filepath.WalkDir(b.victims, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		var st syscall.Stat_t
		syscall.Lstat(p, &st)
		body, _ := os.ReadFile(p)
		fmt.Fprintf(&s, "%s %o %d %q\n", p, st.Mode, st.Uid, body)
		return nil
	})
	return s.String()
}

// runBounded runs one root command, at most within limit; a command that
// blocks (on a FIFO at plant) is let go and reported.
func runBounded(t *testing.T, args []string, limit time.Duration, plant string) (result, bool) {
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
		done <- result{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r, true
	case <-time.After(limit):
		attacker.Unblock(plant, 5*time.Second)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
		return result{}, false
	}
}

// TestAttackRootCommandsPlanted: for each command root may run on the
// installed data dir, the daemon's user plants at every path it touches a
// symbolic link (to root's file or root-only folder), a FIFO, a hard link
// (of root's file; a kernel without protected_hardlinks lets the daemon
// make one), and a link swapped in and out in a loop. Nothing outside the
// data dir may change, and every command ends within seconds — when it
// fails, with a message.
func TestAttackRootCommandsPlanted(t *testing.T) {
	attacker.User(t)
	today := time.Now().UTC().Format("2006-01-02")
	paths := []string{store.DefaultFile, store.DefaultFile + "-wal", store.DefaultFile + "-shm",
		"receiver", "receiver/receiver.json", "receiver/smbd-allow", "receiver/held", "receiver/held/" + today,
		"receiver/inbox", "receiver/inbox/front/x.pdf", "canaries", daemon.SetupLinkName, webcert.CertName}
	kinds := []string{"symlink", "fifo", "hardlink", "swap"}
	if testing.Short() {
		kinds = kinds[:2]
	}
	for _, kind := range kinds {
		for _, rel := range paths {
			t.Run(kind+"/"+strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
				b := newRootBox(t)
				p := filepath.Join(b.data, rel)
				passwd := filepath.Join(b.victims, "passwd")
				target := passwd
				if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
					target = filepath.Join(b.victims, "rootonly")
				}
				before := b.snapshot()
				var stop func() int
				switch kind {
				case "symlink":
					os.RemoveAll(p)
					attacker.Symlink(t, target, p)
				case "fifo":
					os.RemoveAll(p)
					attacker.Fifo(t, p)
				case "hardlink":
					if target != passwd {
						t.Skip("a folder has no hard link")
					}
					os.RemoveAll(p)
					if err := os.Link(passwd, p); err != nil {
						t.Fatal(err)
					}
				case "swap":
					if _, err := os.Lstat(p); err != nil {
						os.MkdirAll(filepath.Dir(p), 0o700)
						os.WriteFile(p, nil, 0o600)
						attacker.Own(t, b.data)
					}
					stop = attacker.Swap(t, p, target, time.Minute, 50_000_000)
				}
				rounds := 1
				if kind == "swap" {
					rounds = 2 // the commands again, the link still swapping
				}
				var cmds [][]string
				for range rounds {
					cmds = append(cmds, b.commands()...)
				}
				for _, args := range cmds {
					start := time.Now()
					r, ok := runBounded(t, args, 15*time.Second, p)
					if !ok {
						t.Errorf("%s: blocked (killed after 15 s)", strings.Join(args[:2], " "))
						continue
					}
					if d := time.Since(start); d > 10*time.Second {
						t.Errorf("%s: took %v", strings.Join(args[:2], " "), d)
					}
					if r.code != exitOK && strings.TrimSpace(r.stderr+r.stdout) == "" {
						t.Errorf("%s: exit %d without a word", strings.Join(args[:2], " "), r.code)
					}
					if testing.Verbose() && r.code != exitOK {
						t.Logf("%s: exit %d: %s", strings.Join(args[:2], " "), r.code, firstLine(r.stderr+r.stdout))
					}
					if now := b.snapshot(); now != before {
						t.Fatalf("%s changed what lies outside the data dir:\n%s\nwas\n%s", strings.Join(args, " "), now, before)
					}
				}
				if stop != nil {
					if n := stop(); n == 0 {
						t.Errorf("the daemon's user made no exchange")
					}
				}
			})
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
