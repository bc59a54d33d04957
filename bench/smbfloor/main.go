// Command smbfloor times, in one process and without scanwarden, the SMB
// requests a destination check needs on one connection — TCP connect,
// negotiate + session setup, tree connect, create, write 8 KiB, read it
// back, close, delete, log-off — through the same SMB library: the floor
// under `scanwarden check` (bench/smbcheck.sh prints both). Lab only.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
)

func main() {
	addr := flag.String("addr", "", "server IP (a lab address)")
	share := flag.String("share", "scans", "share")
	user := flag.String("user", "", "user")
	domain := flag.String("domain", "", "NTLM domain")
	n := flag.Int("n", 20, "runs (1..500)")
	flag.Parse()
	pw := os.Getenv("SMBFLOOR_PASSWORD")
	if *addr == "" || *user == "" || *n < 1 || *n > 500 {
		fmt.Fprintln(os.Stderr, "usage: SMBFLOOR_PASSWORD=... smbfloor -addr IP -user U [-domain D] [-share S] [-n N]")
		os.Exit(2)
	}
	phases := []string{"tcp", "negotiate+session", "tree", "create", "write", "read", "close", "delete", "logoff", "total"}
	took := map[string][]time.Duration{}
	payload := make([]byte, 8192)
	for i := range *n {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		lap := time.Now()
		start := lap
		mark := func(p string) {
			now := time.Now()
			took[p] = append(took[p], now.Sub(lap))
			lap = now
		}
		fail := func(what string, err error) {
			fmt.Fprintf(os.Stderr, "smbfloor: run %d: %s: %v\n", i, what, err)
			os.Exit(1)
		}
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(*addr, "445"))
		if err != nil {
			fail("connect", err)
		}
		mark("tcp")
		d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: *user, Password: pw, Domain: *domain}}
		s, err := d.DialConn(ctx, conn, *addr)
		if err != nil {
			fail("logon", err)
		}
		mark("negotiate+session")
		sh, err := s.WithContext(ctx).Mount(`\\` + *addr + `\` + *share)
		if err != nil {
			fail("tree connect", err)
		}
		mark("tree")
		name := fmt.Sprintf("smbfloor-%d-%d.tmp", os.Getpid(), i)
		f, err := sh.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			fail("create", err)
		}
		mark("create")
		if _, err := f.Write(payload); err != nil {
			fail("write", err)
		}
		mark("write")
		if _, err := f.ReadAt(payload, 0); err != nil {
			fail("read", err)
		}
		mark("read")
		if err := f.Close(); err != nil {
			fail("close", err)
		}
		mark("close")
		if err := sh.Remove(name); err != nil {
			fail("delete", err)
		}
		mark("delete")
		s.Logoff()
		conn.Close()
		mark("logoff")
		took["total"] = append(took["total"], time.Since(start))
		cancel()
	}
	var line []string
	for _, p := range phases {
		v := took[p]
		slices.Sort(v)
		line = append(line, fmt.Sprintf("%s %.1f", p, float64(v[len(v)/2].Microseconds())/1000))
	}
	fmt.Printf("one connection, in-process (medians of %d, ms): %s\n", *n, strings.Join(line, ", "))
}
