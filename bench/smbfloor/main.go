// Command smbfloor times, in one process and without scanwarden, the SMB
// requests a destination check needs on one connection — TCP connect,
// negotiate + session setup, tree connect, create, write 8 KiB, read it
// back, close, delete, log-off — through the same SMB library: the floor
// under `scanwarden check` (bench/smbcheck.sh prints both). Alternating with
// them, whole checks (smbcheck.Run) in this same process with the state
// store open: what a check costs without a process start, a store to open
// and a store to close — once asking the server's lowest dialect as the
// CLI's one check does, once remembering it per server as serve's
// scheduled checks do (smbcheck.LowestDialects). Lab only.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

var phases = []string{"tcp", "negotiate+session", "tree", "create", "write", "read", "close", "delete", "logoff", "total"}

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
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "smbfloor")
	if err != nil {
		fail("state dir", err)
	}
	defer os.RemoveAll(dir)
	st, err := store.OpenDir(ctx, dir)
	if err == nil {
		_, err = st.UnlockKey(ctx, filepath.Join(dir, "secret.key"))
	}
	if err != nil {
		fail("state store", err)
	}
	defer st.Close()
	typed := *user
	if *domain != "" {
		typed = *domain + `\` + *user
	}
	t := scanwarden.Target{Host: *addr, Share: *share, User: typed, Password: scanwarden.NewSecret(pw)}

	took := map[string][]time.Duration{}
	var checks, served []time.Duration
	mem := smbcheck.NewLowestDialects(smbcheck.LowestDialectTTL)
	check := func(o smbcheck.Options) time.Duration {
		start := time.Now()
		r := smbcheck.Run(ctx, t, o)
		if r.Verdict.Cause != scanwarden.CauseOK {
			fail("check", fmt.Errorf("%s: %s", r.Verdict.Cause, r.Verdict.Summary))
		}
		return time.Since(start)
	}
	for i := range *n {
		for p, d := range floorOnce(ctx, *addr, *share, *user, *domain, pw, i) {
			took[p] = append(took[p], d)
		}
		o := smbcheck.Options{MaxFailures: smbcheck.DefaultMaxFailures, Ledger: st.Ledger()}
		checks = append(checks, check(o))
		o.LowestDialects = mem
		served = append(served, check(o))
	}
	var line []string
	for _, p := range phases {
		line = append(line, fmt.Sprintf("%s %.1f", p, ms(median(took[p]))))
	}
	fmt.Printf("floor: one connection, in-process (medians of %d, ms): %s\n", *n, strings.Join(line, ", "))
	fmt.Printf("whole check in one process with the store open, alternating: median %.1f ms asking the lowest dialect (as the CLI), %.1f ms remembering it per server (as serve runs them)\n",
		ms(median(checks)), ms(median(served)))
}

// floorOnce runs the requests once on a new connection and returns how long
// each phase took.
func floorOnce(ctx context.Context, addr, share, user, domain, pw string, i int) map[string]time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	took := map[string]time.Duration{}
	lap := time.Now()
	start := lap
	mark := func(p string) {
		now := time.Now()
		took[p] = now.Sub(lap)
		lap = now
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(addr, "445"))
	if err != nil {
		fail("connect", err)
	}
	defer conn.Close()
	mark("tcp")
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: user, Password: pw, Domain: domain}}
	s, err := d.DialConn(ctx, conn, addr)
	if err != nil {
		fail("logon", err)
	}
	mark("negotiate+session")
	sh, err := s.WithContext(ctx).Mount(`\\` + addr + `\` + share)
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
	payload := make([]byte, 8192)
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
	mark("logoff")
	took["total"] = time.Since(start)
	return took
}

func median(v []time.Duration) time.Duration {
	slices.Sort(v)
	return v[len(v)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "smbfloor: %s: %v\n", what, err)
	os.Exit(1)
}
