package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudsoda/go-smb2"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/resolve"
	"github.com/scanwarden/scanwarden/testlab"
)

// smbNegotiate is an SMB2 NEGOTIATE (2.0.2, 2.1) in its NetBIOS frame.
func smbNegotiate() []byte {
	h := make([]byte, 64)
	copy(h, "\xfeSMB")
	binary.LittleEndian.PutUint16(h[4:], 64)
	binary.LittleEndian.PutUint16(h[14:], 1)
	body := make([]byte, 40)
	binary.LittleEndian.PutUint16(body[0:], 36)
	binary.LittleEndian.PutUint16(body[2:], 2)
	binary.LittleEndian.PutUint16(body[4:], 1)
	binary.LittleEndian.PutUint16(body[36:], 0x0202)
	binary.LittleEndian.PutUint16(body[38:], 0x0210)
	msg := append(h, body...)
	return append([]byte{0, 0, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

// smbRefused connects from ip, sends a NEGOTIATE and says whether smbd
// closed the connection without an SMB answer (smbd's hosts allow sends at
// most a NetBIOS negative session response, 0x83, before closing); err:
// it answered SMB, or kept the connection open.
func smbRefused(ip netip.Addr, addr string) (bool, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip.AsSlice()}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(smbNegotiate())
	b, err := io.ReadAll(c)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return false, errors.New("still open after 5 s")
	case bytes.Contains(b, []byte("\xfeSMB")):
		return false, fmt.Errorf("smbd answered SMB (%d bytes)", len(b))
	case len(b) > 0 && b[0] != 0x83:
		return false, fmt.Errorf("smbd answered % x", b)
	}
	return true, nil
}

// upload logs on from ip as the MFP and writes a file.
func upload(ip netip.Addr, addr, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip.AsSlice()}, Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	s, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "mfpserve", Password: "Mfp.Serve-25"}}).DialConn(ctx, c, addr)
	if err != nil {
		c.Close()
		return err
	}
	defer s.Logoff()
	sh, err := s.Mount(`\\127.0.0.1\scans`)
	if err != nil {
		return err
	}
	defer sh.Umount()
	return sh.WriteFile(name, []byte("%PDF-1.4\n% from "+ip.String()+"\n%%EOF\n"), 0o644)
}

// serve's fallback share admits the registered MFPs' addresses, and follows
// the registry: with no device it is open to the box's networks (a standing
// warning); once an MFP is registered at 127.0.0.1, a host at 127.0.0.2 is
// refused before any SMB is read while the MFP uploads; registering
// 127.0.0.2 as a device admits it. Real managed smbd (root + samba).
// serveWithReceiver starts serve with [receiver] enabled on a free
// loopback port (a real smbd, so root); its end stops serve and the smbd
// that outlives it.
func serveWithReceiver(t *testing.T) *Main {
	t.Helper()
	return serveReceiver(t, nil)
}

// serveReceiver is serveWithReceiver with set (when not nil) applied to
// Main before it opens (a resolver of the test's).
func serveReceiver(t *testing.T, set func(*Main)) *Main {
	t.Helper()
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/testparm"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba not installed: "+p)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Serve-25\n"), 0o600)
	cfg := testConfig(t, "[receiver]\nenabled = true\nlisten = \""+addr+"\"\naccount = \"mfpserve\"\npassword_file = \""+pw+"\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if set != nil {
		set(m)
	}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var rs receiver.Status
		if m.recv != nil {
			rs, _ = m.recv.r.Status(context.Background())
		}
		m.Close()
		if rs.SmbdPid > 0 { // smbd outlives the daemon; this test ends it
			if p, err := os.FindProcess(rs.SmbdPid); err == nil {
				p.Signal(syscall.SIGTERM)
				waitUntil(t, 10*time.Second, "smbd and its children to exit", func() bool { return syscall.Kill(-p.Pid, 0) != nil })
			}
		}
	})
	if m.recv == nil {
		t.Fatalf("receiver not running: %+v", m.Faults())
	}
	return m
}

func TestAttackReceiverAllowFollowsDevices(t *testing.T) {
	m := serveWithReceiver(t)
	ctx := context.Background()
	addr := m.Config.Receiver.Listen
	mfp, other := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	status := func() (allow, warnings []string) {
		t.Helper()
		st, err := m.recv.r.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws, _ := m.recv.backend().Status(ctx)
		if !slices.Equal(ws.Allow, st.Allow) {
			t.Errorf("web shows allow %v, receiver %v", ws.Allow, st.Allow)
		}
		return st.Allow, st.Warnings
	}

	// No device registered: the box's networks, with a standing warning.
	allow, warnings := status()
	if !slices.Contains(allow, "127.0.0.0/8") || len(warnings) != 1 || !strings.Contains(warnings[0], "no MFP is registered") {
		t.Fatalf("no device: allow %v, warnings %q", allow, warnings)
	}
	if err := upload(other, addr, "before.pdf"); err != nil {
		t.Fatalf("no device registered: upload from %s: %v", other, err)
	}

	// The MFP registered at 127.0.0.1 (by name and port, as an admin types it).
	if err := m.Store().Devices().PutDevice(ctx, registry.Device{Name: "mfp-a", Address: "127.0.0.1:161"}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	m.SyncDevices(ctx)
	if allow, warnings = status(); !slices.Equal(allow, []string{"127.0.0.1/32"}) || len(warnings) != 0 {
		t.Fatalf("one device: allow %v, warnings %q", allow, warnings)
	}
	waitUntil(t, 10*time.Second, "smbd to refuse 127.0.0.2", func() bool { ok, _ := smbRefused(other, addr); return ok })
	reloaded := time.Since(t0)
	for i := range 5 {
		if ok, err := smbRefused(other, addr); !ok {
			t.Fatalf("attempt %d from %s not refused: %v", i, other, err)
		}
	}
	if err := upload(other, addr, "intruder.pdf"); err == nil {
		t.Fatalf("%s uploaded while not a device", other)
	}
	if err := upload(mfp, addr, "mfp-a.pdf"); err != nil {
		t.Fatalf("the registered MFP's upload: %v", err)
	}

	// 127.0.0.2 registered too: admitted.
	if err := m.Store().Devices().PutDevice(ctx, registry.Device{Name: "mfp-b", Address: "127.0.0.2"}); err != nil {
		t.Fatal(err)
	}
	m.SyncDevices(ctx)
	if allow, _ = status(); !slices.Equal(allow, []string{"127.0.0.1/32", "127.0.0.2/32"}) {
		t.Fatalf("two devices: allow %v", allow)
	}
	waitUntil(t, 10*time.Second, "the second device's upload", func() bool { return upload(other, addr, "mfp-b.pdf") == nil })
	conf, _ := os.ReadFile(filepath.Join(m.Config.DataDir, "receiver", "smbd", "smb.conf"))
	if !strings.Contains(string(conf), "hosts allow = 127.0.0.1/32 127.0.0.2/32\n") {
		t.Errorf("smb.conf:\n%s", conf)
	}
	t.Logf("refused from %s %v after the MFP was registered (smb.conf rewritten, testparm, smbd reloaded)", other, reloaded.Round(time.Millisecond))
}

// Device names are resolved for the share's allowlist; one that does not
// resolve now keeps what it last resolved to (a DNS hiccup must not lock an
// MFP out), and is named when it never did. No device and no allow: the
// box's networks with the standing warning. The resolver is a fake (no
// DNS server here fails on demand): mfp-flaky resolves, then fails.
func TestReceiverAllowNames(t *testing.T) {
	ctx := context.Background()
	m := &Main{Config: new(testConfig(t, "")), Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dns := &fakeDNS{zone: map[string][]netip.Addr{"localhost": {netip.MustParseAddr("127.0.0.1")},
		"mfp-flaky.invalid": {netip.MustParseAddr("10.9.8.7")}}}
	p := &receiverPart{env: m.env, names: resolve.NewCache(dns, 2*time.Second)}
	a, err := p.allowlist(ctx)
	allow, warning := a.Allow, a.Warning
	if err != nil || !slices.Contains(allow, netip.MustParsePrefix("127.0.0.0/8")) || !strings.Contains(warning, "no MFP is registered") {
		t.Fatalf("no device: %v %q %v", allow, warning, err)
	}
	for _, d := range []registry.Device{{Name: "by-name", Address: "localhost:161"}, {Name: "gone", Address: "mfp-gone.invalid"},
		{Name: "flaky", Address: "mfp-flaky.invalid"}, {Name: "unpolled"}} {
		if err := m.Store().Devices().PutDevice(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	p.configured = []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}
	if a, err = p.allowlist(ctx); err != nil || !slices.Contains(a.Allow, netip.MustParsePrefix("10.9.8.7/32")) {
		t.Fatalf("mfp-flaky resolving: %+v %v", a, err)
	}
	dns.fail("mfp-flaky.invalid")
	a, err = p.allowlist(ctx)
	allow, warning, unresolved := a.Allow, a.Warning, a.Unresolved
	if err != nil || warning != "" || !slices.Equal(unresolved, []string{"gone"}) || !slices.Contains(allow, netip.MustParsePrefix("127.0.0.1/32")) ||
		!slices.Contains(allow, netip.MustParsePrefix("10.9.8.7/32")) || !slices.Contains(allow, netip.MustParsePrefix("10.1.2.0/24")) {
		t.Fatalf("allow %v, warning %q, unresolved %v, %v", allow, warning, unresolved, err)
	}
	if dns.asked("mfp-flaky.invalid") != 2 {
		t.Fatalf("mfp-flaky asked %d times, want 2 (the kept address is what a failed lookup left)", dns.asked("mfp-flaky.invalid"))
	}
}

// fakeDNS is a fake resolver (no DNS server here fails on demand): a name
// in zone resolves to its addresses, any other is not found; fail takes a
// name out. It counts the lookups of each name.
type fakeDNS struct {
	mu    sync.Mutex
	zone  map[string][]netip.Addr
	count map[string]int
}

func (f *fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count == nil {
		f.count = map[string]int{}
	}
	f.count[host]++
	if ips, ok := f.zone[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
}

func (f *fakeDNS) fail(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.zone, host)
}

func (f *fakeDNS) asked(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[host]
}

// When no MFP is registered, nothing is configured and this box's networks
// cannot be read (the interface list fails — a fake: it does not fail on
// demand here), the fallback share admits 127.0.0.1 alone (hosts allow +
// hosts deny = ALL), not any address (an empty list writes no hosts
// allow), and the standing warning says so. Real managed smbd.
func TestAttackReceiverAllowNoNetworks(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/testparm"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba not installed: "+p)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Serve-25\n"), 0o600)
	cfg := testConfig(t, "[receiver]\nenabled = true\nlisten = \""+addr+"\"\naccount = \"mfpserve\"\npassword_file = \""+pw+"\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" },
		localNets: func() samba.LocalNets {
			return samba.LocalNets{Err: errors.New("interface addresses: netlink: permission denied")}
		}}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		var pid int
		if m.recv != nil {
			rs, _ := m.recv.r.Status(ctx)
			pid = rs.SmbdPid
		}
		m.Close()
		if pid > 0 { // smbd outlives the daemon; this test ends it
			if p, err := os.FindProcess(pid); err == nil {
				p.Signal(syscall.SIGTERM)
				waitUntil(t, 10*time.Second, "smbd and its children to exit", func() bool { return syscall.Kill(-p.Pid, 0) != nil })
			}
		}
	}()
	if m.recv == nil {
		t.Fatalf("receiver not running: %+v", m.Faults())
	}
	st, err := m.recv.r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Allow, []string{"127.0.0.1/32"}) || len(st.Warnings) != 1 ||
		!strings.Contains(st.Warnings[0], "127.0.0.1 only") || !strings.Contains(st.Warnings[0], "permission denied") {
		t.Fatalf("allow %v, warnings %q", st.Allow, st.Warnings)
	}
	t.Logf("warning: %s", st.Warnings[0])
	conf, _ := os.ReadFile(filepath.Join(cfg.DataDir, "receiver", "smbd", "smb.conf"))
	if !strings.Contains(string(conf), "hosts allow = 127.0.0.1/32\n") || !strings.Contains(string(conf), "hosts deny = ALL\n") {
		t.Errorf("smb.conf:\n%s", conf)
	}
	if ok, err := smbRefused(netip.MustParseAddr("127.0.0.2"), addr); !ok {
		t.Errorf("127.0.0.2 not refused: %v", err)
	}
	if err := upload(netip.MustParseAddr("127.0.0.1"), addr, "local.pdf"); err != nil {
		t.Errorf("upload from 127.0.0.1: %v", err)
	}
	// the periodic sync keeps it so
	m.recv.syncAllow(ctx)
	if st, _ = m.recv.r.Status(ctx); !slices.Equal(st.Allow, []string{"127.0.0.1/32"}) {
		t.Errorf("after a sync: allow %v", st.Allow)
	}
}

// A destination added from the CLI while serve runs gets its folder on the
// share at `systemctl reload` (Reload), not only at the share's next rescan
// a minute later: the MFP's first scan to it must find the folder.
func TestReloadMakesANewDestinationsFolder(t *testing.T) {
	m := serveWithReceiver(t)
	ctx := context.Background()
	if err := m.Store().Destinations().PutDestination(ctx, registry.Destination{Name: "late", Host: "127.0.0.1", Share: "scans", User: "walt",
		Password: scanwarden.NewSecret("x")}); err != nil {
		t.Fatal(err)
	}
	inbox := receiver.Inbox(filepath.Join(m.Config.DataDir, "receiver"))
	if _, err := os.Stat(filepath.Join(inbox, "late")); err == nil {
		t.Fatal("the folder exists before the reload: the test proves nothing")
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the new destination's folder on the share (rescan in a minute)", func() bool {
		fi, err := os.Stat(filepath.Join(inbox, "late"))
		return err == nil && fi.IsDir()
	})
}
