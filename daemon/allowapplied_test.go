package daemon

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/resolve"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestAllowlistRootLagIsAFault: the installed layout's share (external
// smbd; this test is root's side and applies the daemon's list only when
// it says so). A registered MFP changes the daemon's list; root never
// applies it (systemd's path unit missed the write, or is stopped): the
// daemon writes the list again after each wait, then raises the fault
// receiver.allow.applied naming both lists, who is refused and who still
// admitted, and the fix. While root lags, the daemon's log (info and up)
// stays quiet until root's refusal reason changes (a warn line, the fault
// naming the new reason); once root applies the list, the fault clears.
func TestAllowlistRootLagIsAFault(t *testing.T) {
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/testparm", "/usr/bin/smbpasswd"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba not installed: "+p)
		}
	}
	dir := t.TempDir()
	smbdDir := filepath.Join(dir, "scanwarden-smbd") // root's own
	if err := os.Mkdir(smbdDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pw := filepath.Join(dir, "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Lag-25\n"), 0o600)
	cfg := testConfig(t, "[receiver]\nenabled = true\nlisten = \"127.0.0.1:44598\"\naccount = \"mfplag\"\npassword_file = \""+pw+"\"\n"+
		"external_smbd = true\nsmbd_dir = \""+smbdDir+"\"\n")
	st := testStore(t, cfg)
	defer st.Close()
	fs := newFaults(time.Now)
	waits := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	logs := &syncBuffer{}
	p := &receiverPart{env: env{st: st, faults: fs, log: slog.New(slog.NewTextHandler(logs, nil))},
		names: resolve.NewCache(&fakeDNS{}, time.Second),
		localNets: func() samba.LocalNets {
			return samba.LocalNets{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
		},
		handTimes: samba.HandoverTimes{Waits: waits, Retry: 300 * time.Millisecond, MaxRetry: 1200 * time.Millisecond, Poll: 10 * time.Millisecond, Check: 50 * time.Millisecond}}
	// root took the list of the daemon's start before (no MFP: the box's
	// network)
	if err := os.WriteFile(samba.AppliedFile(smbdDir), samba.FormatAllow(p.localNets().Nets), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx, cfg, nil); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	allowFile := samba.AllowFile(p.dir)
	apply := func() { // root's reload step: the daemon's list taken
		b, err := os.ReadFile(allowFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(samba.AppliedFile(smbdDir), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fault := func() (scanwarden.Fault, bool) {
		for _, f := range fs.list() {
			if f.Part == allowAppliedPart {
				return f, true
			}
		}
		return scanwarden.Fault{}, false
	}
	time.Sleep(time.Second)
	if f, ok := fault(); ok {
		t.Fatalf("a fault while root has the list: %s", f.Message)
	}

	// an MFP registered: the daemon's list changes, root never sees it
	if err := st.Devices().PutDevice(ctx, registry.Device{Name: "mfp1", Address: "10.9.8.5"}); err != nil {
		t.Fatal(err)
	}
	again := func() int { return strings.Count(logs.String(), "written again") }
	if n := again(); n != 0 {
		t.Fatalf("written again %d times while root had the list:\n%s", n, logs.String())
	}
	start := time.Now()
	p.syncAllow(ctx)
	var f scanwarden.Fault
	for {
		var ok bool
		if f, ok = fault(); ok {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no fault %s within 10 s of a list root never applied (written again %d times); faults: %+v\n%s", allowAppliedPart, again(), fs.list(), logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	if n := again(); n < 2 { // the fault says after 3 writes; a loaded box may see the next Retry's
		t.Errorf("the list was written again %d times before the fault, want 2 (3 writes in all):\n%s", n, logs.String())
	}
	if took < waits[0]+waits[1]+waits[2] {
		t.Errorf("fault after %v, before root's waits passed", took)
	}
	for _, want := range []string{
		"after 3 writes",
		"smbd refuses 10.9.8.5/32, which the daemon admits",
		"smbd still admits 127.0.0.0/8, which the daemon no longer does",
		"The daemon's list (" + allowFile + "): 10.9.8.5/32",
		"root's (" + samba.AppliedFile(smbdDir) + "): 127.0.0.0/8",
		"systemctl status scanwarden-smbd-reload.path",
	} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("fault lacks %q:\n%s", want, f.Message)
		}
	}
	t.Logf("fault after %v: %s", took.Round(time.Millisecond), f.Message)

	// root keeps lagging: the list is written again (after 300 ms, then
	// 600 ms), the log says nothing more. Waited for as two rewrites (each
	// a new file renamed in place), not as a time: on a loaded box a sleep
	// could pass before any rewrite was made.
	quiet := len(logs.String())
	inode := func() uint64 {
		fi, err := os.Stat(allowFile)
		if err != nil {
			return 0
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	for range 2 {
		was := inode()
		waitUntil(t, 10*time.Second, "the daemon to write its list again while root lags", func() bool { return inode() != was })
	}
	if more := logs.String()[quiet:]; strings.Contains(more, "allowlist") {
		t.Errorf("the daemon logged of its allowlist while root kept lagging and nothing changed:\n%s", more)
	}
	// root refuses the list, saying why (as its reload step does): the
	// fault names the reason, one warn line says so
	reason := "10.9.8.5/32 is a network that neither [receiver] allow nor this box's networks contain; the file is refused"
	if err := os.WriteFile(samba.RefusedFile(smbdDir), []byte(reason+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "the fault to name root's reason", func() bool {
		f, ok := fault()
		return ok && strings.Contains(f.Message, "root refused the daemon's list ("+reason+")")
	})
	if n := strings.Count(logs.String(), "level=WARN msg=\"root gives another reason for not applying the fallback share's allowlist\""); n != 1 {
		t.Errorf("%d warn lines for root's new reason, want 1:\n%s", n, logs.String()[quiet:])
	}

	// root applies it (the path unit works again, or the admin reloaded
	// smbd's unit): the fault clears
	apply()
	waitUntil(t, 5*time.Second, "the fault to clear", func() bool { _, ok := fault(); return !ok })
	if got, err := samba.ReadApplied(smbdDir); err != nil || len(got) != 1 || got[0] != netip.MustParsePrefix("10.9.8.5/32") {
		t.Errorf("root's list %v (%v)", got, err)
	}
	if !strings.Contains(logs.String(), "root applied the fallback share's allowlist") {
		t.Errorf("the daemon's log does not say root applied the list:\n%s", logs.String())
	}
}
