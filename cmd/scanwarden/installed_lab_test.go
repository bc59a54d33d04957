package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// installedServe is `serve` in the installed layout: the daemon as an
// unprivileged user with external_smbd, root rendering smb.conf (`receiver
// prepare`) and running smbd, the fallback share on the client
// namespace's address. The lab tests of the installed layout share it.
type installedServe struct {
	t        *testing.T
	lab      *testlab.Lab
	dir      string // everything of this run
	data     string // the daemon's data dir
	bin      string // the test binary, run as the daemon's user
	cliIP    string // the MFP stand-in's (and the share's) address
	port     int    // the share's port
	mfpPw    string // the MFP account's password on the share
	uid, gid int
	cfg      string // serve's config file
	serve    *exec.Cmd
	serveLog *syncBuffer
}

// installedDaemonUser is the daemon's user, as the package's sysusers
// entry makes one.
const installedDaemonUser = "swinstalled"

// startInstalled seeds the store (seed, as root, before the daemon owns
// it), starts serve as the daemon's user with config (data_dir and the
// [receiver] section, with receiver's lines added, are added) and smbd as
// root, and waits until the share listens.
func startInstalled(t *testing.T, config, receiver string, seed func(st *store.Store)) *installedServe {
	lab := testlab.Require(t)
	if os.Geteuid() != 0 {
		testlab.Missing(t, "the installed layout runs smbd as root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/smbclient", "/usr/bin/pdbedit"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba not installed: "+p)
		}
	}
	in := &installedServe{t: t, lab: lab, cliIP: os.Getenv("SWLAB_CLI_IP"), mfpPw: "Mfp.Profile-29"}
	if in.cliIP == "" {
		testlab.Missing(t, "SWLAB_CLI_IP not set")
	}
	ctx := context.Background()
	duser, err := user.Lookup(installedDaemonUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", installedDaemonUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v: %s", err, out)
		}
		if duser, err = user.Lookup(installedDaemonUser); err != nil {
			t.Fatal(err)
		}
	}
	in.uid, _ = strconv.Atoi(duser.Uid)
	in.gid, _ = strconv.Atoi(duser.Gid)
	if in.dir, err = os.MkdirTemp("", "swinstalled-"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(in.dir) })
	os.Chmod(in.dir, 0o755)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in.bin = filepath.Join(in.dir, "scanwarden.test")
	if b, err := os.ReadFile(exe); err != nil || os.WriteFile(in.bin, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	in.data = filepath.Join(in.dir, "data")
	smbdDir := filepath.Join(in.dir, "scanwarden-smbd") // root's own
	pwFile := filepath.Join(in.dir, "mfp.pw")
	os.WriteFile(pwFile, []byte(in.mfpPw+"\n"), 0o644)

	st, err := store.OpenDir(ctx, in.data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UnlockKey(ctx, filepath.Join(in.data, "secret.key")); err != nil {
		t.Fatal(err)
	}
	seed(st)
	st.Close()
	if out, err := exec.Command("chown", "-R", duser.Uid+":"+duser.Gid, in.data).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(in.cliIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	in.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := filepath.Join(in.dir, "serve.toml")
	os.WriteFile(cfg, []byte(`data_dir = "`+in.data+`"
`+config+`
[receiver]
enabled = true
listen = "`+net.JoinHostPort(in.cliIP, strconv.Itoa(in.port))+`"
account = "swmfp"
password_file = "`+pwFile+`"
external_smbd = true
smbd_dir = "`+smbdDir+`"
quiet = "1s"
`+receiver+`
`), 0o644)

	in.cfg, in.serveLog = cfg, &syncBuffer{}
	in.startServe()
	t.Cleanup(func() {
		serve := in.serve
		serve.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { serve.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			serve.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("serve's log:\n%s", in.serveLog.String())
		}
	})
	in.until("the daemon writes its allowlist", 30*time.Second, func() bool {
		_, err := os.Stat(samba.AllowFile(filepath.Join(in.data, "receiver")))
		return err == nil
	})
	// root's side: smb.conf from root's config and the daemon's allowlist,
	// then smbd as the unit's command line says
	if r := runCLI(t, nil, "", "receiver", "prepare", "--config", cfg, "--user", installedDaemonUser); r.code != exitOK {
		t.Fatalf("receiver prepare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	smbd := exec.Command("/usr/sbin/smbd", "--foreground", "--no-process-group", "-s", filepath.Join(smbdDir, "smb.conf"), "-l", filepath.Join(smbdDir, "log"))
	smbd.Env = append(os.Environ(), "NOTIFY_SOCKET=")
	smbd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := smbd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { smbd.Process.Signal(syscall.SIGTERM); smbd.Wait() })
	in.until("smbd listens", 20*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(in.cliIP, strconv.Itoa(in.port)), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return in
}

// startServe starts serve, as the daemon's user, in a process group of
// its own.
func (in *installedServe) startServe() {
	in.t.Helper()
	in.serve = in.command("serve", "--config", in.cfg)
	in.serve.SysProcAttr.Setpgid = true
	in.serve.Stderr, in.serve.Stdout = in.serveLog, in.serveLog
	if err := in.serve.Start(); err != nil {
		in.t.Fatal(err)
	}
}

// kill9 ends serve (its whole process group) with SIGKILL, as a crash or
// `systemctl kill -s KILL` does, and starts it again; root's smbd runs on.
func (in *installedServe) kill9() {
	in.t.Helper()
	syscall.Kill(-in.serve.Process.Pid, syscall.SIGKILL)
	in.serve.Wait()
	in.startServe()
}

// command is the scanwarden command line args, run as the daemon's user.
func (in *installedServe) command(args ...string) *exec.Cmd {
	c := exec.Command(in.bin, append([]string{"-test.run=^$", "--"}, args...)...)
	c.Env = append(os.Environ(), mainEnv+"=1", "SCANWARDEN_KEY_FILE=", "NOTIFY_SOCKET=")
	c.Dir = in.dir
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(in.uid), Gid: uint32(in.gid)}}
	return c
}

// cli runs a scanwarden command as the daemon's user, beside serve.
func (in *installedServe) cli(args ...string) (stdout string, code int) {
	in.t.Helper()
	var out, errb bytes.Buffer
	c := in.command(args...)
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		in.t.Fatalf("%v: %v", args, err)
	}
	if errb.Len() > 0 {
		in.t.Logf("%v: stderr: %s", args, strings.TrimSpace(errb.String()))
	}
	return out.String(), code
}

// until waits for ok, polling.
func (in *installedServe) until(what string, d time.Duration, ok func() bool) {
	in.t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			in.t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// read runs fn on the daemon's store opened read-only, as root reads it
// (doctor).
func (in *installedServe) read(fn func(st *store.Store) bool) bool {
	st, err := store.OpenReadOnlyDir(context.Background(), in.data)
	if err != nil {
		in.t.Logf("read the store: %v", err)
		return false
	}
	defer st.Close()
	return fn(st)
}

// scan is the MFP stand-in sending one scan to folder on the fallback
// share from the device's address: SMB 2.1 at most, no encryption, its
// own NetBIOS name.
func (in *installedServe) scan(folder, name string, body []byte) {
	in.t.Helper()
	src := filepath.Join(in.dir, "src-"+name)
	os.WriteFile(src, body, 0o644)
	out, err := exec.Command("smbclient", "//"+in.cliIP+"/scans", "-p", strconv.Itoa(in.port), "-U", "swmfp%"+in.mfpPw, "--use-kerberos=disabled",
		"-m", "SMB2_10", "--option=client smb encrypt=off", "-n", "MFP21", "-c", `cd `+folder+`; put "`+src+`" `+name).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("NT_STATUS_")) {
		in.t.Fatalf("the MFP stand-in's scan %s: %v: %s", name, err, out)
	}
}
