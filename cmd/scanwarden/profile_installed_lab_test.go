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

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabInstalledDeviceProfileReplay is issue 29's "done when", in the
// installed layout: `serve` runs as an unprivileged daemon user with
// external_smbd; root renders smb.conf (`receiver prepare`) and runs smbd.
// A destination of device mfp21 on smb2srv's `sealed` share (SMB3
// encryption required) passes while nothing is known of the MFP (the check
// is scanwarden's own client, which encrypts). Then an MFP stand-in at the
// device's address — smbclient limited to SMB 2.1, no encryption — sends
// one scan to the fallback share; the daemon learns its client from root's
// smbd log (data it may read) and its next checks replay as that client,
// with no flag given: SMB 2.1, no encryption, and the destination fails
// with encryption-required and the panel's 1102.
func TestLabInstalledDeviceProfileReplay(t *testing.T) {
	lab := testlab.Require(t)
	if os.Geteuid() != 0 {
		testlab.Missing(t, "the installed layout runs smbd as root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/smbclient", "/usr/bin/pdbedit"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba not installed: "+p)
		}
	}
	cliIP := os.Getenv("SWLAB_CLI_IP")
	if cliIP == "" {
		testlab.Missing(t, "SWLAB_CLI_IP not set")
	}
	ctx := context.Background()
	// the daemon's user, as the package's sysusers entry makes one
	const daemonUser = "swinstalled"
	duser, err := user.Lookup(daemonUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", daemonUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd: %v: %s", err, out)
		}
		if duser, err = user.Lookup(daemonUser); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(duser.Uid)
	gid, _ := strconv.Atoi(duser.Gid)
	dir, err := os.MkdirTemp("", "swprofile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "scanwarden.test")
	if b, err := os.ReadFile(exe); err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	data := filepath.Join(dir, "data")
	smbdDir := filepath.Join(dir, "scanwarden-smbd") // root's own
	pwFile := filepath.Join(dir, "mfp.pw")
	const mfpPw = "Mfp.Profile-29"
	os.WriteFile(pwFile, []byte(mfpPw+"\n"), 0o644)

	// The registry as the admin leaves it: the MFP at its address, its
	// destination on the encryption-required share. No device flag.
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UnlockKey(ctx, filepath.Join(data, "secret.key")); err != nil {
		t.Fatal(err)
	}
	if err := st.PutDevice(ctx, registry.Device{Name: "mfp21", Address: cliIP, Model: "TASKalfa 3253ci"}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutDestination(ctx, registry.Destination{Name: "sealed", Host: lab.SMB2IP, Share: "sealed", User: "scanuser",
		Password: scanwarden.NewSecret(lab.Password), Device: "mfp21", Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if out, err := exec.Command("chown", "-R", duser.Uid+":"+duser.Gid, data).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v: %s", err, out)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(cliIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := filepath.Join(dir, "serve.toml")
	os.WriteFile(cfg, []byte(`data_dir = "`+data+`"
listen = "127.0.0.1:0"
[checks]
interval = "10s"
jitter = "0s"
timeout = "10s"
[receiver]
enabled = true
listen = "`+net.JoinHostPort(cliIP, strconv.Itoa(port))+`"
account = "swmfp"
password_file = "`+pwFile+`"
external_smbd = true
smbd_dir = "`+smbdDir+`"
quiet = "1s"
`), 0o644)

	// the daemon, as its user
	serve := exec.Command(bin, "-test.run=^$", "--", "serve", "--config", cfg)
	serve.Env = append(os.Environ(), mainEnv+"=1", "SCANWARDEN_KEY_FILE=", "NOTIFY_SOCKET=")
	serve.Dir = dir
	serve.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Setpgid: true}
	var serveLog syncBuffer
	serve.Stderr, serve.Stdout = &serveLog, &serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
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
			t.Logf("serve's log:\n%s", serveLog.String())
		}
	})
	until := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, d)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	until("the daemon writes its allowlist", 30*time.Second, func() bool {
		_, err := os.Stat(samba.AllowFile(filepath.Join(data, "receiver")))
		return err == nil
	})
	// root's side: smb.conf from root's config and the daemon's allowlist,
	// then smbd as the unit's command line says
	if r := runCLI(t, nil, "", "receiver", "prepare", "--config", cfg, "--user", daemonUser); r.code != exitOK {
		t.Fatalf("receiver prepare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	smbd := exec.Command("/usr/sbin/smbd", "--foreground", "--no-process-group", "-s", filepath.Join(smbdDir, "smb.conf"), "-l", filepath.Join(smbdDir, "log"))
	smbd.Env = append(os.Environ(), "NOTIFY_SOCKET=")
	smbd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := smbd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { smbd.Process.Signal(syscall.SIGTERM); smbd.Wait() })
	until("smbd listens", 20*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(cliIP, strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	// root reads the daemon's store read-only, as doctor does
	read := func(fn func(st *store.Store) bool) bool {
		st, err := store.OpenReadOnlyDir(ctx, data)
		if err != nil {
			t.Logf("read the store: %v", err)
			return false
		}
		defer st.Close()
		return fn(st)
	}
	negotiated := func(rep smbcheck.Report) string {
		for _, s := range rep.Steps {
			if s.ID == smbcheck.StepNegotiate {
				d, _ := s.Evidence["dialect"].(string)
				return d
			}
		}
		return ""
	}
	// Nothing known of the MFP: scanwarden's own client encrypts, and the
	// destination passes — what the issue calls "ok while the MFP fails".
	var first registry.Report
	until("the first scheduled check", 60*time.Second, func() bool {
		return read(func(st *store.Store) bool {
			r, ok, err := st.LatestReport(ctx, "sealed")
			first = r
			return err == nil && ok
		})
	})
	if first.Cause != smbcheck.CauseOK || negotiated(first.Report) != "3.1.1" {
		t.Fatalf("before the MFP was seen: %s, negotiated %q; want ok over 3.1.1 (scanwarden's own client)\n%s", first.Cause, negotiated(first.Report), first.JSON)
	}

	// The MFP stand-in scans once to the fallback share from the device's
	// address: SMB 2.1 at most, no encryption, its own NetBIOS name.
	src := filepath.Join(dir, "scan.pdf")
	os.WriteFile(src, []byte("%PDF-1.4\n1 0 obj\n<< >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"), 0o644)
	out, err := exec.Command("smbclient", "//"+cliIP+"/scans", "-p", strconv.Itoa(port), "-U", "swmfp%"+mfpPw, "--use-kerberos=disabled",
		"-m", "SMB2_10", "--option=client smb encrypt=off", "-n", "MFP21", "-c", `cd sealed; put "`+src+`" doc0001.pdf`).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("NT_STATUS_")) {
		t.Fatalf("the MFP stand-in's scan: %v: %s", err, out)
	}
	sent := time.Now()
	var dev registry.Device
	until("the device's profile learned from the share", 30*time.Second, func() bool {
		return read(func(st *store.Store) bool {
			d, err := st.Device(ctx, "mfp21")
			dev = d
			return err == nil && d.Profile.Seen[registry.FieldMaxDialect].Value != "" && d.Profile.Seen[registry.FieldFileType].Value != ""
		})
	})
	vals := map[registry.ProfileField]registry.ProfileValue{}
	for _, v := range dev.Values() {
		vals[v.Field] = v
	}
	for f, want := range map[registry.ProfileField]string{registry.FieldMaxDialect: "2.1", registry.FieldEncryption: "no", registry.FieldNTLM: "v2", registry.FieldFileType: "pdf"} {
		if v := vals[f]; v.Value != want || v.Origin != registry.OriginSeen || !strings.Contains(v.Session, "from "+cliIP) {
			t.Errorf("%s = %+v, want %s seen from %s", f, v, want, cliIP)
		}
	}
	if dev.Profile.Workstation.Value != "MFP21" {
		t.Errorf("workstation seen %q, want MFP21", dev.Profile.Workstation.Value)
	}
	// Its checks now replay as that client: the next ones (at once, as the
	// device's client changed, and on schedule every 10 s) negotiate 2.1,
	// do not encrypt, and the destination fails.
	var after []registry.Report
	until("two checks replayed as the MFP", 60*time.Second, func() bool {
		return read(func(st *store.Store) bool {
			rs, err := st.Reports(ctx, "sealed", 10)
			if err != nil {
				return false
			}
			after = after[:0]
			for _, r := range rs {
				if r.At.After(sent) {
					after = append(after, r)
				}
			}
			return len(after) >= 2
		})
	})
	for _, r := range after {
		if negotiated(r.Report) != "2.1" || r.Cause != smbcheck.CauseEncryptionRequired || r.KyoceraCode != "1102" {
			t.Errorf("a check after the MFP was seen: %s (panel %s), negotiated %q; want %s (1102) over SMB 2.1\n%s",
				r.Cause, r.KyoceraCode, negotiated(r.Report), smbcheck.CauseEncryptionRequired, r.JSON)
		}
	}
	t.Logf("after the MFP was seen: %s (panel %s): %s", after[0].Cause, after[0].KyoceraCode, after[0].Summary)
}
