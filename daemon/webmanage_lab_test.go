package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/testlab"
	"github.com/scanwarden/scanwarden/web"
)

// Removing a destination whose scans are held, "deliver them elsewhere":
// the running receiver delivers the scan to the other destination at once
// (the lab DC's share, read back by the forwarder): the move makes it due,
// its hour of back-off for the old destination dropped.
func TestLabRemoveDeliversHeldElsewhere(t *testing.T) {
	lab := testlab.Require(t)
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Serve-25\n"), 0o600)
	cfg := testConfig(t, "[checks]\ninterval = \"1h\"\n[receiver]\nenabled = true\nlisten = \"127.0.0.1:"+strconv.Itoa(port)+
		"\"\naccount = \"mfpmove\"\npassword_file = \""+pw+"\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		rs, _ := m.recv.r.Status(context.Background())
		m.Close()
		if rs.SmbdPid > 0 { // smbd outlives the daemon; this test ends it
			syscall.Kill(rs.SmbdPid, syscall.SIGTERM)
			waitUntil(t, 10*time.Second, "smbd to exit", func() bool { return syscall.Kill(-rs.SmbdPid, 0) != nil })
		}
	}()
	if m.recv == nil {
		t.Fatalf("receiver not running: %+v", m.Faults())
	}
	ctx := context.Background()
	st := m.Store()
	for _, d := range []registry.Destination{
		{Name: "gone", Host: lab.Getenv("SWLAB_GHOST_IP"), Share: "scans", User: "alice", Password: scanwarden.NewSecret("x")},
		{Name: "dcscans", Host: lab.DCHost, Share: "scans", User: lab.Domain + `\alice`, Password: scanwarden.NewSecret(lab.Password)},
	} {
		d.Source = registry.SourceAdded
		if err := st.Destinations().PutDestination(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	content := []byte("%PDF-1.4\n% moved to another destination " + time.Now().Format(time.RFC3339Nano) + "\n%%EOF\n")
	sum := sha256.Sum256(content)
	rel := filepath.Join("held", "2026-12-06", "moved.pdf")
	os.MkdirAll(filepath.Join(cfg.DataDir, "receiver", filepath.Dir(rel)), 0o700)
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "receiver", rel), content, 0o600); err != nil {
		t.Fatal(err)
	}
	id, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "gone", Folder: "gone", File: "moved.pdf", Size: int64(len(content)),
		SHA256: hex.EncodeToString(sum[:]), State: receiver.Failed, Attempts: 3, NextAttempt: time.Now().Add(time.Hour),
		ReceivedAt: time.Now(), HeldPath: rel})
	if err != nil {
		t.Fatal(err)
	}
	n, err := webRegistry{m}.RemoveDestination(ctx, "gone", web.HeldMove, "dcscans")
	if err != nil || n != 1 {
		t.Fatalf("remove: %d %v", n, err)
	}
	t0 := time.Now()
	var sc receiver.Scan
	waitUntil(t, 60*time.Second, "the moved scan delivered", func() bool {
		sc, _ = st.Scans().Scan(ctx, id)
		return sc.State == receiver.Delivered
	})
	t.Logf("delivered to dcscans as %s %v after the removal", sc.RemoteName, time.Since(t0).Round(time.Millisecond))
	if sc.Destination != "dcscans" {
		t.Fatalf("delivered scan: %+v", sc)
	}
}
