package receiver_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// installed is the installed layout by hand: the daemon's side (the
// receiver with ExternalSamba, its files owned by an unprivileged user) and
// root's side (PrepareShare in a root-owned folder, then smbd started with
// exactly scanwarden-smbd.service's command line).
type rootLayout struct {
	t       *testing.T
	e       *env
	daemon  *user.User
	uid     int
	gid     int
	rootDir string // root's own folder for smbd
	smbd    *exec.Cmd
}

// daemonUser is the unprivileged user standing in for scanwarden:
// swdaemon, a system user made once (as the tests make swmfp). Not nobody:
// Samba's guest account may not be a share's force user.
func daemonUser(t *testing.T) (*user.User, int, int) {
	u, err := user.Lookup("swdaemon")
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "swdaemon").CombinedOutput(); err != nil {
			t.Fatalf("useradd swdaemon: %v %s", err, out)
		}
		if u, err = user.Lookup("swdaemon"); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return u, uid, gid
}

func newRootLayout(t *testing.T) *rootLayout {
	t.Helper()
	requireSmbd(t)
	if err := samba.FullAuditModule(context.Background(), ""); err != nil {
		testlab.Missing(t, err.Error())
	}
	u, uid, gid := daemonUser(t)
	base := t.TempDir()
	// the daemon's user reaches its data dir (as /var/lib is 0755)
	for p := base; p != "/tmp" && p != "/"; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	in := &rootLayout{t: t, daemon: u, uid: uid, gid: gid, rootDir: filepath.Join(base, "scanwarden-smbd")}
	data := filepath.Join(base, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenDir(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := receiver.Config{DataDir: filepath.Join(data, "receiver"), SmbdDir: in.rootDir, Listen: mustAddr("127.0.0.1"), Port: freePort(t),
		Share: "scans", Accounts: []samba.Account{{Name: "swmfp", Password: scanwardenSecret(mfpPassword)}},
		Allow:         []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		ExternalSamba: true,
		Watch:         receiver.WatchConfig{Quiet: 2 * time.Second, QuietAfterLogoff: 100 * time.Millisecond, Rescan: time.Second},
		Forward:       receiver.DefaultForward}
	r, err := receiver.New(cfg, st.Scans(), staticDests{{Name: "front", Folder: "front"}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	in.e = &env{t: t, dir: cfg.DataDir, st: st, r: r, cfg: cfg}
	in.chownDaemon(data)
	if r.Samba().Pid() != 0 {
		t.Fatal("the receiver started smbd in external mode")
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "smbd", "smb.conf")); err == nil {
		t.Fatal("the daemon wrote an smb.conf")
	}
	if _, err := os.Stat(in.rootDir); err == nil {
		t.Fatal("the daemon made root's folder")
	}
	return in
}

// chownDaemon gives the daemon's user everything under dir, as if it had
// written it (the test process is root).
func (in *rootLayout) chownDaemon(dir string) {
	in.t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, in.uid, in.gid)
		}
		return nil
	})
}

// daemonWrites writes a file as the daemon's user could (owned by it).
func (in *rootLayout) daemonWrites(path string, b []byte) {
	in.t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		in.t.Fatal(err)
	}
	in.chownDaemon(filepath.Dir(path))
}

func (in *rootLayout) setup() samba.ShareSetup {
	c := in.e.cfg
	return samba.ShareSetup{
		Config: samba.Config{Dir: in.rootDir, Inbox: receiver.Inbox(c.DataDir), Listen: c.Listen, Port: c.Port, Share: c.Share,
			Accounts: c.Accounts},
		AllowFile: samba.AllowFile(c.DataDir),
		Owner:     in.daemon.Username,
	}
}

// prepare runs the root step (ExecStartPre=/ExecReload=).
func (in *rootLayout) prepare() (samba.ShareResult, string) {
	in.t.Helper()
	var log bytes.Buffer
	res, err := samba.PrepareShare(context.Background(), in.setup(), slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		in.t.Fatalf("prepare: %v\n%s", err, log.String())
	}
	return res, log.String()
}

// start runs smbd as the unit does (ExecStart=).
func (in *rootLayout) start() {
	in.t.Helper()
	c := samba.Config{Dir: in.rootDir}
	in.smbd = exec.Command("/usr/sbin/smbd", c.SmbdArgs()...)
	in.smbd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := in.smbd.Start(); err != nil {
		in.t.Fatal(err)
	}
	in.t.Cleanup(func() {
		in.smbd.Process.Signal(syscall.SIGTERM)
		in.smbd.Wait()
		// its children (one per connection) end after it: they write
		// smbd's log in the folder the test is about to remove
		conf := []byte(filepath.Join(in.rootDir, "smb.conf"))
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
			alive := false
			for _, p := range procs {
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, conf) {
					alive = true
					break
				}
			}
			if !alive {
				return
			}
		}
	})
}

// reload is ExecReload=: prepare, then HUP.
func (in *rootLayout) reload() (samba.ShareResult, string) {
	in.t.Helper()
	res, log := in.prepare()
	in.smbd.Process.Signal(syscall.SIGHUP)
	time.Sleep(300 * time.Millisecond) // smbd re-reads its config on the next event
	return res, log
}

// putUntil uploads as the MFP until smbd takes it (it may still be starting).
func (in *rootLayout) putUntil(name string, data []byte) {
	in.t.Helper()
	var err error
	for i := 0; i < 50; i++ {
		if err = in.e.put(name, data, false); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(in.rootDir, "log", "log.smbd"))
	c, _ := os.ReadFile(filepath.Join(in.rootDir, "smb.conf"))
	out, _ := exec.Command("ls", "-laR", filepath.Dir(in.e.cfg.DataDir)).CombinedOutput()
	in.t.Fatalf("%v\n%s\n%s\n%s", err, b, c, out)
}

// TestExternalSamba (the installed layout by hand): the daemon's receiver
// hands over only its allowlist; root renders smb.conf in its own folder,
// smbd runs from it as the unit starts it; scans flow; Close leaves smbd
// running; a password changed in root's config reaches the passdb at the
// next prepare.
func TestExternalSamba(t *testing.T) {
	in := newRootLayout(t)
	res, _ := in.prepare()
	if !res.Changed || res.Refused != "" || len(res.Allow) != 1 {
		t.Fatalf("first prepare: %+v", res)
	}
	in.start()
	in.putUntil("front/a.pdf", pdf("external"))
	// smbd logs (and full_audit records) in root's folder, where -l says
	if b, err := os.ReadFile(filepath.Join(in.rootDir, "log", "log.smbd")); err != nil || !bytes.Contains(b, []byte("|create_file|ok|")) {
		t.Errorf("smbd's log in root's folder: %v", err)
	}
	in.e.waitScans(5*time.Second, "held", func(rows []receiver.Scan) bool { return count(rows, receiver.Held) == 1 })
	if pid := in.e.r.Samba().Find(); pid != in.smbd.Process.Pid {
		t.Errorf("the daemon finds smbd %d by root's pid file, want %d", pid, in.smbd.Process.Pid)
	}
	st, err := in.e.r.Status(context.Background())
	if err != nil || !st.SmbdUp {
		t.Errorf("status: %+v %v", st, err)
	}
	in.e.r.Close()
	if err := in.smbd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatal("Close stopped the unit's smbd")
	}
	// root's config changes the account's password: the next prepare
	setup := in.setup()
	setup.Config.Accounts[0].Password = scanwardenSecret("Other.Pass-9")
	if _, err := samba.PrepareShare(context.Background(), setup, nil); err != nil {
		t.Fatal(err)
	}
	if err := in.e.put("front/b.pdf", pdf("old password"), false); err == nil {
		t.Fatal("the old password still works after the root side changed it")
	}
}

// TestAttackDaemonWritesRootObeysNothing: whatever the daemon's user
// writes, root's step takes addresses from it and nothing else. Each attack
// of issue 18 — `root preexec` and `passdb backend = smbpasswd:/a root
// file` in what the daemon writes (its allowlist, and the smb.conf it used to
// write), a symlink at the old private dir, the allowlist a symlink to a
// root file — is refused (named in the log), smb.conf stays byte for byte,
// and no root-owned file is created or changed: not the preexec marker, not
// the root file (content and mode), nothing behind the symlinks. The share
// keeps working on the last good list.
func TestAttackDaemonWritesRootObeysNothing(t *testing.T) {
	in := newRootLayout(t)
	in.prepare()
	in.start()
	in.putUntil("front/first.pdf", pdf("before"))
	conf := filepath.Join(in.rootDir, "smb.conf")
	good, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	victims := t.TempDir() // root's: nothing may appear or change here
	marker := filepath.Join(victims, "preexec-ran")
	rootFile := filepath.Join(victims, "root-file")
	if err := os.WriteFile(rootFile, []byte("root's own\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(victims, "private-target")
	os.Mkdir(target, 0o700)
	dataDir := in.e.cfg.DataDir
	allowFile := samba.AllowFile(dataDir)
	allowGood, _ := os.ReadFile(allowFile)
	preexec := "\troot preexec = /bin/sh -c \"id > " + marker + "\"\n"
	passdb := "\tpassdb backend = smbpasswd:" + rootFile + "\n"

	attacks := []struct {
		name   string
		plant  func()
		reason string // what the log must name
	}{
		{"root preexec in the allowlist", func() {
			in.daemonWrites(allowFile, append(append([]byte{}, allowGood...), "[global]\n"+preexec...))
		}, "[global]"},
		{"passdb redirect in the allowlist", func() {
			in.daemonWrites(allowFile, append(append([]byte{}, allowGood...), passdb...))
		}, "passdb backend"},
		{"preexec and passdb in the old smb.conf, symlink at the old private dir", func() {
			in.daemonWrites(allowFile, allowGood)
			old := filepath.Join(dataDir, "smbd")
			in.daemonWrites(filepath.Join(old, "smb.conf"), []byte("[global]\n"+preexec+passdb+"\tprivate dir = "+filepath.Join(old, "private")+"\n"))
			os.Symlink(target, filepath.Join(old, "private"))
			os.Lchown(filepath.Join(old, "private"), in.uid, in.gid)
		}, ""},
		{"the allowlist a symlink to a root file", func() {
			os.Remove(allowFile)
			os.Symlink(rootFile, allowFile)
			os.Lchown(allowFile, in.uid, in.gid)
		}, "symbolic link"},
		{"the receiver dir a symlink", func() {
			os.Remove(allowFile)
			in.daemonWrites(allowFile, allowGood)
			moved := dataDir + ".real"
			os.Rename(dataDir, moved)
			os.Symlink(moved, dataDir)
			os.Lchown(dataDir, in.uid, in.gid)
			t.Cleanup(func() { os.Remove(dataDir); os.Rename(moved, dataDir) })
		}, "symbolic link"},
	}
	for _, a := range attacks {
		a.plant()
		res, log := in.reload()
		if a.reason != "" {
			if res.Refused == "" || !strings.Contains(log, "refused") || !strings.Contains(log, a.reason) {
				t.Errorf("%s: not refused or not named: %+v\nlog: %s", a.name, res, log)
			}
		} else if res.Refused != "" {
			t.Errorf("%s: the allowlist itself was fine but refused: %s", a.name, res.Refused)
		}
		if got, _ := os.ReadFile(conf); !bytes.Equal(got, good) {
			t.Errorf("%s: smb.conf changed:\n%s", a.name, got)
		}
		// an MFP logs on (the moment root preexec would run) and stores a scan
		if err := in.e.put("front/"+strings.ReplaceAll(a.name, " ", "-")+".pdf", pdf(a.name), false); err != nil {
			t.Errorf("%s: the share stopped working: %v", a.name, err)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%s: root preexec ran", a.name)
		}
		if b, _ := os.ReadFile(rootFile); string(b) != "root's own\n" {
			t.Errorf("%s: the root file changed: %q", a.name, b)
		}
		if fi, err := os.Stat(rootFile); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: the root file's mode changed: %v %v", a.name, fi.Mode(), err)
		}
		if ents, _ := os.ReadDir(target); len(ents) > 0 {
			t.Errorf("%s: root wrote behind the planted private symlink: %v", a.name, ents)
		}
	}
	if ents, _ := os.ReadDir(victims); len(ents) != 2 {
		t.Errorf("root-owned side effects in %s: %v", victims, ents)
	}
}
