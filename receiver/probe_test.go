package receiver_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// probe is ProbeShare on the layout's share as the config's MFP account.
func (in *rootLayout) probe() samba.ShareHealth {
	c := in.e.cfg
	return samba.ProbeShare(context.Background(), samba.ShareProbe{Listen: c.Listen, Port: c.Port, Share: c.Share, Account: c.Accounts[0],
		Inbox: receiver.Inbox(c.DataDir), SmbdDir: in.rootDir, Unit: true, Timeout: 3 * time.Second})
}

// healthy waits until smbd (just started) passes the probe.
func (in *rootLayout) healthy() {
	in.t.Helper()
	var h samba.ShareHealth
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		if h = in.probe(); h.OK() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(in.rootDir, "log", "log.smbd"))
	in.t.Fatalf("a healthy share fails the probe: %+v\nsmbd's log: %s", h, log[max(0, len(log)-2000):])
}

// servingLayout is the installed layout by hand with smbd serving the share.
func servingLayout(t *testing.T) *rootLayout {
	t.Helper()
	in := newRootLayout(t)
	in.prepare()
	in.start()
	in.healthy()
	return in
}

// editConf changes a line of root's smb.conf behind the root step's back,
// has smbd reload it, and returns the first probe that fails.
func (in *rootLayout) editConf(from, to string) samba.ShareHealth {
	in.t.Helper()
	conf := filepath.Join(in.rootDir, "smb.conf")
	b, _ := os.ReadFile(conf)
	edited := strings.Replace(string(b), from, to, 1)
	if edited == string(b) {
		in.t.Fatalf("no %q in %s", from, b)
	}
	os.WriteFile(conf, []byte(edited), 0o644)
	in.smbd.Process.Signal(syscall.SIGHUP)
	var h samba.ShareHealth
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if h = in.probe(); !h.OK() {
			break
		}
	}
	return h
}

// mustCause asserts the probe names cause, with a fix, and its detail says want.
func mustCause(t *testing.T, h samba.ShareHealth, cause samba.ShareCause, want ...string) {
	t.Helper()
	t.Logf("probe: %s (%s) %q; smbd log: %q; fix: %q", h.Cause, h.NTStatus, h.Detail, h.SmbdLog, h.Fix)
	if h.Cause != cause {
		t.Fatalf("cause %s, want %s: %+v", h.Cause, cause, h)
	}
	if h.Fix == "" || h.Err() == nil {
		t.Errorf("a failure without a fix or an error: %+v", h)
	}
	for _, w := range want {
		if !strings.Contains(h.Detail+" | "+h.Fix, w) {
			t.Errorf("%q does not say %q", h.Detail+" | "+h.Fix, w)
		}
	}
}

// TestProbeShare*, in the installed layout by hand (root smbd as the unit
// starts it, the share's user the unprivileged daemon's): each way smbd
// refuses the MFPs is provoked for real and named, with its fix; a healthy
// share passes, also when the allowlist names only the MFPs (the box's own
// address is admitted for the probe).
func TestProbeShare(t *testing.T) {
	t.Run("healthy, allowlist without this box", func(t *testing.T) {
		in := newRootLayout(t)
		in.daemonWrites(samba.AllowFile(in.e.cfg.DataDir), samba.FormatAllow([]netip.Prefix{netip.MustParsePrefix("10.9.9.9/32")}))
		in.prepare()
		in.start()
		in.healthy()
		if h := in.probe(); h.Err() != nil || h.Detail == "" || h.At.IsZero() {
			t.Fatalf("healthy: %+v", h)
		}
	})
}

// TestProbeShareInbox: the share's folder gone, or denied to the share's user.
func TestProbeShareInbox(t *testing.T) {
	t.Run("inbox gone", func(t *testing.T) {
		in := servingLayout(t)
		in.e.r.Close() // the running daemon makes it again within a second
		inbox := receiver.Inbox(in.e.cfg.DataDir)
		if err := os.RemoveAll(inbox); err != nil {
			t.Fatal(err)
		}
		mustCause(t, in.probe(), samba.ShareNotServed, "NT_STATUS_BAD_NETWORK_NAME", inbox+" does not exist", "systemctl restart scanwarden")
	})
	t.Run("inbox denied", func(t *testing.T) {
		in := servingLayout(t)
		in.e.r.Close()
		inbox := receiver.Inbox(in.e.cfg.DataDir)
		if err := os.Chmod(inbox, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(inbox, 0o750)
		mustCause(t, in.probe(), samba.ShareFolderDenied, "ACCESS_DENIED", inbox, "mode 0750")
	})
}

// TestProbeSharePassdb: smbd's passdb without the configured password, or without the account.
func TestProbeSharePassdb(t *testing.T) {
	t.Run("other password", func(t *testing.T) {
		in := servingLayout(t)
		setup := in.setup()
		setup.Config.Accounts = []samba.Account{{Name: "swmfp", Password: scanwardenSecret("Other.Pass-9")}}
		if _, err := samba.PrepareShare(context.Background(), setup, nil); err != nil {
			t.Fatal(err)
		}
		mustCause(t, in.probe(), samba.ShareLogonRefused, "LOGON_FAILURE", "swmfp", "systemctl restart scanwarden-smbd")
	})
	t.Run("no account", func(t *testing.T) {
		in := servingLayout(t)
		if out, err := exec.Command("smbpasswd", "-c", filepath.Join(in.rootDir, "smb.conf"), "-x", "swmfp").CombinedOutput(); err != nil {
			t.Fatalf("smbpasswd -x: %v %s", err, out)
		}
		mustCause(t, in.probe(), samba.ShareLogonRefused, "LOGON_FAILURE", "swmfp")
	})
}

// TestProbeShareSmbd: smbd stopped, or running a config without the share or
// without this box, or something else on the port.
func TestProbeShareSmbd(t *testing.T) {
	t.Run("smbd stopped", func(t *testing.T) {
		in := servingLayout(t)
		in.smbd.Process.Signal(syscall.SIGTERM)
		in.smbd.Wait()
		mustCause(t, in.probe(), samba.ShareNotListening, "connection refused", "systemctl start scanwarden-smbd")
	})
	// smbd runs an smb.conf without the share the config names (rendered,
	// not yet loaded; here: probed under another name than smbd serves).
	t.Run("share not served", func(t *testing.T) {
		in := servingLayout(t)
		c := in.e.cfg
		h := samba.ProbeShare(context.Background(), samba.ShareProbe{Listen: c.Listen, Port: c.Port, Share: "scans2", Account: c.Accounts[0],
			Inbox: receiver.Inbox(c.DataDir), SmbdDir: in.rootDir, Unit: true, Timeout: 3 * time.Second})
		mustCause(t, h, samba.ShareNotServed, "NT_STATUS_BAD_NETWORK_NAME", "does not serve that share", "systemctl reload scanwarden-smbd")
	})
	// An smb.conf from before the box's own address was admitted.
	t.Run("this box not admitted", func(t *testing.T) {
		in := servingLayout(t)
		h := in.editConf("hosts allow = 127.0.0.1/32\n", "hosts allow = 10.9.9.9/32\n")
		mustCause(t, h, samba.ShareNotAdmitted, "hosts allow", "systemctl reload scanwarden-smbd")
	})
	// Something else holds the port and says nothing.
	t.Run("no SMB answer", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
			}
		}()
		h := samba.ProbeShare(context.Background(), samba.ShareProbe{Listen: netip.MustParseAddr("127.0.0.1"), Port: l.Addr().(*net.TCPAddr).Port,
			Share: "scans", Account: samba.Account{Name: "swmfp", Password: scanwardenSecret(mfpPassword)}, Timeout: time.Second})
		mustCause(t, h, samba.ShareNoAnswer, "accepts the connection but does not answer")
	})
}

func TestProbeShareVFS(t *testing.T) {
	// A share whose VFS module does not load: smbd's own failure
	// (vfs_init failed → BAD_NETWORK_NAME at every tree connect), made by
	// naming a module this Samba does not have — what full_audit is on a
	// box without samba-vfs-modules.
	t.Run("vfs module does not load", func(t *testing.T) {
		in := servingLayout(t)
		h := in.editConf("vfs objects = full_audit\n", "vfs objects = full_audit_not_installed\n")
		mustCause(t, h, samba.ShareVFSModuleMissing, "NT_STATUS_BAD_NETWORK_NAME", "apt-get install samba-vfs-modules")
		if !errors.Is(h.Err(), samba.ErrVFSModuleMissing) || !strings.Contains(h.SmbdLog, "full_audit_not_installed") {
			t.Errorf("err %v, smbd log %q", h.Err(), h.SmbdLog)
		}
	})
}

// TestProbeRunningReceiver: the running receiver (the daemon's side of the
// installed layout) probes its share itself: before root's smbd runs, its
// status names smbd not listening and the unit to start (in Status, which
// the web page shows, and in receiver.json, which `receiver status` reads
// from another process); once smbd serves the share, the next probe (within
// ProbeFailedEvery) clears the fault.
func TestProbeRunningReceiver(t *testing.T) {
	in := newRootLayout(t)
	status := func(cond func(receiver.Status) bool, d time.Duration) receiver.Status {
		t.Helper()
		deadline := time.Now().Add(d)
		for {
			st, err := in.e.r.Status(context.Background())
			if err == nil && cond(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("status not as wanted within %v: %+v %v", d, st, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	st := status(func(st receiver.Status) bool { return st.ShareCheck != nil }, 5*time.Second)
	if st.ShareCheck.Cause != samba.ShareNotListening || !strings.Contains(st.Fault, "systemctl start scanwarden-smbd") {
		t.Fatalf("before smbd runs: %+v fault %q", st.ShareCheck, st.Fault)
	}
	other, err := receiver.ReadStatus(context.Background(), in.e.cfg.DataDir, in.e.st.Scans(), nil)
	if err != nil || other.ShareCheck == nil || other.ShareCheck.Cause != samba.ShareNotListening || other.Fault != st.Fault {
		t.Fatalf("from another process: %+v %v", other, err)
	}
	p, ok := receiver.ReadShareProbe(in.e.cfg.DataDir)
	if !ok || p.Account.Name != "swmfp" || !p.Unit || p.Port != in.e.cfg.Port || p.SmbdDir != in.rootDir || !p.Account.Password.IsZero() {
		t.Fatalf("the probe another process reads: %+v", p)
	}
	in.prepare()
	in.start()
	st = status(func(st receiver.Status) bool { return st.ShareCheck != nil && st.ShareCheck.OK() }, receiver.ProbeFailedEvery+10*time.Second)
	if st.Fault != "" {
		t.Fatalf("a working share with a fault: %q", st.Fault)
	}
}

// TestProbeShareNoAccount: without an account and password nothing is sent,
// and the probe says so (not "no answer").
func TestProbeShareNoAccount(t *testing.T) {
	h := samba.ProbeShare(context.Background(), samba.ShareProbe{Listen: netip.MustParseAddr("127.0.0.1"), Port: 1, Share: "scans",
		Account: samba.Account{Name: "swmfp"}})
	if h.Cause != samba.ShareUnknown || !strings.Contains(h.Detail, "not probed") || h.Fix == "" {
		t.Fatalf("%+v", h)
	}
}
