package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/store"
)

func target(sub string) scanwarden.Target {
	return scanwarden.Target{Host: env("SWLAB_DC_IP"), Share: "scans", Path: sub, User: env("SWLAB_DOMAIN") + `\alice`,
		Password: scanwarden.NewSecret(env("SWLAB_PASSWORD")), Workstation: "MFP01"}
}

// copySynced copies src to a new file dst, fsynced, and returns its size
// and SHA-256.
func copySynced(src, dst string) (int64, string, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, "", err
	}
	defer out.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(out, h), in, make([]byte, 1<<20))
	if err != nil {
		return 0, "", err
	}
	if err := out.Sync(); err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), out.Close()
}

// deliverChild catalogues SRC as a held scan in a fresh data dir and
// delivers it through receiver.DeliverNow (SMBRemote via smbclient.Dial).
func deliverChild(arg string) error {
	parts := strings.Split(arg, "|")
	src, sub := parts[0], parts[1]
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rxbench-data")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	rx := filepath.Join(dir, "rx")
	held := filepath.Join(rx, "held", "x.pdf")
	os.MkdirAll(filepath.Dir(held), 0o700)
	// a copy of its own, on disk before the timed delivery: the forwarder
	// refuses a held file with a second name (a hard link)
	n, sum, err := copySynced(src, held)
	if err != nil {
		return err
	}
	if _, err := st.Scans().AddScan(ctx, receiver.Scan{Destination: "bench", Folder: "bench", File: "scan.pdf", Size: n,
		SHA256: sum, State: receiver.Held, ReceivedAt: time.Now(), HeldPath: "held/x.pdf"}); err != nil {
		return err
	}
	if p := os.Getenv("RXBENCH_CPUPROFILE"); p != "" {
		pf, err := os.Create(p + "." + parts[2])
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(pf)
		defer pf.Close()
		defer pprof.StopCPUProfile()
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	c0 := selfCPU()
	t0 := time.Now()
	k, err := receiver.DeliverNow(ctx, rx, st.Scans(), dests{{Name: "bench", Folder: "bench", Target: target(sub)}},
		receiver.SMBRemote{MaxFailures: 1, Timeout: 30 * time.Second}, "bench")
	if err != nil || k != 1 {
		return fmt.Errorf("delivered %d: %v", k, err)
	}
	fmt.Printf("%.3f %.3f\n", time.Since(t0).Seconds(), selfCPU()-c0)
	return nil
}
