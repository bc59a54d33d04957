package doctor

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// box lays out an installed box in a temp dir: config dir with the config
// (listen on a port the test chooses) and data dir; returns the config path.
func box(t *testing.T, extra string) (conf, data string) {
	t.Helper()
	dir := t.TempDir()
	data = filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o750); err != nil {
		t.Fatal(err)
	}
	etc := filepath.Join(dir, "etc")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	conf = filepath.Join(etc, "scanwarden.toml")
	text := fmt.Sprintf("data_dir = %q\nlisten = \"127.0.0.1:1\"\n%s", data, extra)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf, data
}

func run(t *testing.T, opt Options) Report {
	t.Helper()
	if opt.ServiceUser == "" {
		opt.ServiceUser = currentUser(t)
	}
	opt.Getenv = func(string) string { return "" }
	return Run(context.Background(), opt)
}

func currentUser(t *testing.T) string {
	t.Helper()
	u, err := userCurrent()
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func find(t *testing.T, rep Report, id string) Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no check %s in %+v", id, rep.Checks)
	return Check{}
}

func want(t *testing.T, rep Report, id string, st Status, detail, fix string) {
	t.Helper()
	c := find(t, rep, id)
	if c.Status != st || !strings.Contains(c.Detail, detail) || !strings.Contains(c.Fix, fix) {
		t.Errorf("%s = %s %q (fix %q), want %s with %q (fix %q)", id, c.Status, c.Detail, c.Fix, st, detail, fix)
	}
	if st != OK && st != Skip && c.Fix == "" {
		t.Errorf("%s: %s without a fix", id, st)
	}
}

func TestConfig(t *testing.T) {
	conf, _ := box(t, "bogus_key = 1\n")
	rep := run(t, Options{ConfigFile: conf})
	want(t, rep, "config", Fail, "bogus_key", "--check-config")
	if rep.Result != Fail {
		t.Errorf("result %s, want fail", rep.Result)
	}
	conf, data := box(t, "")
	rep = run(t, Options{ConfigFile: conf})
	want(t, rep, "config", OK, conf+" is valid", "")
	want(t, rep, "data_dir", OK, data+" is writable", "")
}

func TestKey(t *testing.T) {
	conf, data := box(t, "")
	keyNextToConfig := filepath.Join(filepath.Dir(conf), seal.FileName)

	// none yet, no database: a new install
	want(t, run(t, Options{ConfigFile: conf}), "key", Warn, "no key file at "+filepath.Join(data, seal.FileName), "")

	// a database sealed with a key next to the config (the Debian layout)
	ctx := context.Background()
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UnlockKey(ctx, keyNextToConfig); err != nil {
		t.Fatal(err)
	}
	st.Close()
	rep := run(t, Options{ConfigFile: conf})
	want(t, rep, "key", OK, keyNextToConfig+" (mode 0600", "")

	// readable by others
	if err := os.Chmod(keyNextToConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, run(t, Options{ConfigFile: conf}), "key", Fail, "mode 0644", "chmod 600 "+keyNextToConfig)
	if err := os.Chmod(keyNextToConfig, 0o600); err != nil {
		t.Fatal(err)
	}

	// another key than the data dir's
	other := filepath.Join(t.TempDir(), "other.key")
	if _, err := seal.Create(other); err != nil {
		t.Fatal(err)
	}
	want(t, run(t, Options{ConfigFile: conf, KeyFile: other}), "key", Fail, "", "put back the key")

	// gone, while the database holds sealed data
	if err := os.Remove(keyNextToConfig); err != nil {
		t.Fatal(err)
	}
	want(t, run(t, Options{ConfigFile: conf}), "key", Fail, "no key file", "restore the key file")
	// the doctor made no file
	if _, err := os.Stat(filepath.Join(data, seal.FileName)); err == nil {
		t.Errorf("doctor created a key file")
	}
}

// TestDataDirOwner: root sees that a data dir, or a database in it, the
// daemon's user cannot write (a command run as root left it behind).
func TestDataDirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "needs root to give files another owner")
	}
	conf, data := box(t, "")
	const svc = "nobody"
	uid, gid := lookupIDs(t, svc)
	if err := os.Chown(data, uid, gid); err != nil {
		t.Fatal(err)
	}
	want(t, run(t, Options{ConfigFile: conf, ServiceUser: svc}), "data_dir", OK, "writable by nobody", "")
	if err := os.WriteFile(filepath.Join(data, store.DefaultFile), nil, 0o600); err != nil { // root's
		t.Fatal(err)
	}
	want(t, run(t, Options{ConfigFile: conf, ServiceUser: svc}), "data_dir", Fail, store.DefaultFile+" (uid 0)", "chown -R nobody: "+data)
	if err := os.Chown(data, 0, 0); err != nil {
		t.Fatal(err)
	}
	want(t, run(t, Options{ConfigFile: conf, ServiceUser: svc}), "data_dir", Fail, "cannot write it", "chown -R nobody: "+data)
}

// TestPorts holds the web port with a real socket of this process: the
// doctor names the process and says it is not scanwarden's.
func TestPorts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	conf, _ := box(t, "")
	text, _ := os.ReadFile(conf)
	os.WriteFile(conf, []byte(strings.Replace(string(text), "127.0.0.1:1", fmt.Sprintf("127.0.0.1:%d", port), 1)), 0o644)

	id := fmt.Sprintf("port.%d", port)
	rep := run(t, Options{ConfigFile: conf, ServiceUser: "nobody", Timeout: 300 * time.Millisecond})
	if os.Geteuid() == 0 {
		want(t, rep, id, Fail, fmt.Sprintf("held by %s (pid %d) on 127.0.0.1", comm(t), os.Getpid()), "stop "+comm(t))
	} else {
		want(t, rep, id, Fail, "held by", "")
	}
	if rep.Result != Fail {
		t.Errorf("result %s, want fail", rep.Result)
	}
	// held by the daemon's own user: ours
	rep = run(t, Options{ConfigFile: conf, ServiceUser: currentUser(t), Timeout: 300 * time.Millisecond})
	if os.Geteuid() != 0 {
		want(t, rep, id, OK, "held by scanwarden", "")
	}
	l.Close()
	want(t, run(t, Options{ConfigFile: conf}), id, OK, "is free", "")
}

func comm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func userCurrent() (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

func lookupIDs(t *testing.T, name string) (int, int) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("no user %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

func TestFiles(t *testing.T) {
	comm := filepath.Join(t.TempDir(), "community")
	os.WriteFile(comm, []byte("s3cret\n"), 0o644)
	conf, _ := box(t, fmt.Sprintf("[snmp]\ncommunity_file = %q\n", comm))
	want(t, run(t, Options{ConfigFile: conf}), "files", Warn, "snmp.community_file "+comm+" (mode 0644) is readable by every user", "chmod o-r")
	os.Chmod(comm, 0o600)
	want(t, run(t, Options{ConfigFile: conf}), "files", OK, "snmp.community_file readable by", "")
	if os.Geteuid() != 0 {
		return
	}
	lookupIDs(t, "nobody")
	want(t, run(t, Options{ConfigFile: conf, ServiceUser: "nobody"}), "files", Fail, "is not readable by nobody", "chgrp nobody "+comm)
}

func TestReceiverUnit(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Doctor-25\n"), 0o600)
	unit := filepath.Join(t.TempDir(), "scanwarden-smbd.service")
	os.WriteFile(unit, []byte("[Service]\n"), 0o644)
	rx := fmt.Sprintf("[receiver]\nenabled = true\nlisten = \"127.0.0.1:44592\"\npassword_file = %q\n", pw)
	conf, _ := box(t, rx)
	rep := run(t, Options{ConfigFile: conf, SMBUnit: unit, Timeout: 300 * time.Millisecond})
	want(t, rep, "receiver", Warn, "the daemon starts smbd itself", "external_smbd = true")
	want(t, rep, "port.44592", OK, "the fallback share, receiver.listen) is free", "")
	conf, data := box(t, rx+"external_smbd = true\n")
	want(t, run(t, Options{ConfigFile: conf, SMBUnit: unit, Timeout: 300 * time.Millisecond}), "receiver", OK, `\\127.0.0.1:44592\scans, account mfp, smbd in its own unit`, "")
	// Who may connect, as the daemon last set it (data_dir/receiver/receiver.json).
	os.MkdirAll(filepath.Join(data, "receiver"), 0o700)
	info := filepath.Join(data, "receiver", "receiver.json")
	os.WriteFile(info, []byte(`{"listen":"127.0.0.1","port":44592,"allow":["10.0.0.0/24"],"allow_warning":"no MFP is registered and [receiver] allow is empty: the fallback share admits any host on this box's networks (10.0.0.0/24)"}`), 0o600)
	want(t, run(t, Options{ConfigFile: conf, SMBUnit: unit, Timeout: 300 * time.Millisecond}), "receiver.allow", Warn, "no MFP is registered", "register the MFPs")
	os.WriteFile(info, []byte(`{"listen":"127.0.0.1","port":44592,"allow":["10.0.0.7/32"]}`), 0o600)
	want(t, run(t, Options{ConfigFile: conf, SMBUnit: unit, Timeout: 300 * time.Millisecond}), "receiver.allow", OK, "admits 10.0.0.7/32", "")
	want(t, run(t, Options{ConfigFile: conf, SMBUnit: unit, Timeout: 300 * time.Millisecond}), "receiver.ingest", OK, "file leases work", "")
	// The daemon cannot tell whether smbd still writes a scan: it takes none, and says so.
	os.WriteFile(info, []byte(`{"listen":"127.0.0.1","port":44592,"allow":["10.0.0.7/32"],"ingest_stopped":"cannot tell whether /x/a.pdf is still being written: file lease: permission denied"}`), 0o600)
	want(t, run(t, Options{ConfigFile: conf, SMBUnit: unit, Timeout: 300 * time.Millisecond}), "receiver.ingest", Fail, "scans are held in the inbox, not taken: cannot tell whether /x/a.pdf", "fix what it names")
	conf, _ = box(t, "")
	want(t, run(t, Options{ConfigFile: conf, SMBUnit: unit}), "receiver", Skip, "off", "")
}

// TestPortsShareAddress: the fallback share binds receiver.listen only, so
// the port held on another address of the box (another smbd bound to its own
// interfaces) is no clash; held on the share's address, or on every
// address, it is.
func TestPortsShareAddress(t *testing.T) {
	other, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Skip("no 127.0.0.3 here:", err)
	}
	defer other.Close()
	port := other.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("Mfp.Pass-25\n"), 0o600)
	conf, _ := box(t, fmt.Sprintf("[receiver]\nenabled = true\nlisten = \"127.0.0.2:%d\"\npassword_file = %q\n", port, pw))
	id := fmt.Sprintf("port.%d", port)
	rep := run(t, Options{ConfigFile: conf, ServiceUser: "nobody", Timeout: 300 * time.Millisecond})
	want(t, rep, id, OK, "is free on 127.0.0.2 (in use on 127.0.0.3 only", "")

	same, err := net.Listen("tcp", fmt.Sprintf("127.0.0.2:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	rep = run(t, Options{ConfigFile: conf, ServiceUser: "nobody", Timeout: 300 * time.Millisecond})
	want(t, rep, id, Fail, "on 127.0.0.2", "")
	same.Close()
	any, err := net.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", port+1))
	if err != nil {
		t.Skip(err)
	}
	defer any.Close()
	os.WriteFile(conf, []byte(strings.Replace(string(must(os.ReadFile(conf))), fmt.Sprint(port), fmt.Sprint(port+1), 1)), 0o644)
	rep = run(t, Options{ConfigFile: conf, ServiceUser: "nobody", Timeout: 300 * time.Millisecond})
	want(t, rep, fmt.Sprintf("port.%d", port+1), Fail, "is held by", "") // Go binds [::] dual-stack
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestReceiverShare: doctor logs on to the fallback share as the MFP account
// (a real smbd, the one-process layout's): a working share passes; the
// password in the config's file that smbd's passdb does not hold, and smbd
// stopped, fail with their cause and fix.
func TestReceiverShare(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	if _, err := os.Stat("/usr/sbin/smbd"); err != nil {
		testlab.Missing(t, "samba not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Doctor-25\n"), 0o600)
	conf, data := box(t, fmt.Sprintf("[receiver]\nenabled = true\nlisten = \"127.0.0.1:%d\"\naccount = \"swmfp\"\npassword_file = %q\n", port, pw))
	rdir := filepath.Join(data, "receiver")
	s, err := samba.New(samba.Config{Dir: filepath.Join(rdir, "smbd"), Inbox: receiver.Inbox(rdir), Listen: netip.MustParseAddr("127.0.0.1"),
		Port: port, Share: "scans", Accounts: []samba.Account{{Name: "swmfp", Password: scanwarden.NewSecret("Mfp.Doctor-25")}},
		Allow: []netip.Prefix{netip.MustParsePrefix("10.9.9.0/24")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	want(t, run(t, Options{ConfigFile: conf}), "receiver.share", OK, `the MFP account swmfp logged on and connected \\127.0.0.1\scans`, "")

	os.WriteFile(pw, []byte("Not.What-Smbd-Has-1\n"), 0o600)
	want(t, run(t, Options{ConfigFile: conf}), "receiver.share", Fail, "refuses the MFPs (mfp-logon-refused): smbd refuses the MFP account swmfp's logon", "restart the receiver")

	s.Stop(context.Background())
	want(t, run(t, Options{ConfigFile: conf}), "receiver.share", Fail, "(smbd-not-listening): nothing listens on 127.0.0.1:"+strconv.Itoa(port), "starts smbd")
}
