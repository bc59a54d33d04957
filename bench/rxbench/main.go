// Command rxbench measures the receiver against the reference tools, in the
// lab (bench/receiver.sh runs it):
//
//	rxbench forward SIZE_MIB   deliver one held scan of SIZE MiB to the lab
//	                           DC's share through the forwarder (write, rename,
//	                           read back, verify) and `smbclient put` the same
//	                           file, alternating (and, as a reference with
//	                           the forwarder's bytes on the wire, `get` it
//	                           back to /dev/null); peak RSS of the
//	                           forwarding process
//	                           (RXBENCH_ROUNDS rounds, default 3; each
//	                           round's CPU seconds of the forwarder, the
//	                           lab DC's smbd and the whole machine, and the
//	                           load average; RXBENCH_CPUPROFILE=P writes the
//	                           delivery's CPU profile to P.<round>;
//	                           RXBENCH_ORDER=smbclient-first puts first in
//	                           each round)
//	rxbench ingest N           N PDFs put by smbclient (one logon each) into a
//	                           running receiver; close → catalogued latency
//	                           (close-write seen by inotify → the file leaves
//	                           the inbox, which happens only after the commit)
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rxbench forward SIZE_MIB | ingest N | deliver-child DIR DEST")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "forward":
		err = forward(os.Args[2])
	case "ingest":
		err = ingest(os.Args[2])
	case "deliver-child":
		err = deliverChild(os.Args[2])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rxbench:", err)
		os.Exit(1)
	}
}

func env(k string) string {
	v := os.Getenv(k)
	if v == "" {
		fmt.Fprintf(os.Stderr, "rxbench: %s unset: run inside the lab (testlab/lab exec bench/receiver.sh)\n", k)
		os.Exit(2)
	}
	return v
}

type dests []receiver.Destination

func (d dests) Destinations(context.Context) ([]receiver.Destination, error) { return d, nil }

func target(sub string) smbcheck.Target {
	return smbcheck.Target{Host: env("SWLAB_DC_IP"), Share: "scans", Path: sub, User: env("SWLAB_DOMAIN") + `\alice`,
		Password: scanwarden.NewSecret(env("SWLAB_PASSWORD")), Workstation: "MFP01"}
}

// forward: SIZE MiB, 3 rounds alternating forwarder and smbclient put.
func forward(arg string) error {
	mib, err := strconv.Atoi(arg)
	if err != nil || mib < 1 || mib > 4096 {
		return fmt.Errorf("SIZE_MIB must be 1..4096")
	}
	b, err := newFwdBench(mib)
	if err != nil {
		return err
	}
	defer b.close()
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("RXBENCH_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	if err := b.warmUp(); err != nil {
		return err
	}
	defer func() { os.Remove(b.prev) }()
	var fw, sc, pg []float64
	var rss []int64
	for round := 0; round < rounds; round++ {
		_, idle := smbdProcs()
		var d fwdRound
		var p putRound
		forwarder := func() (err error) { d, err = b.viaForwarder(round, idle); return err }
		smbclient := func() (err error) { p, err = b.viaSmbclient(round, idle); return err }
		first, second := forwarder, smbclient
		if os.Getenv("RXBENCH_ORDER") == "smbclient-first" {
			first, second = smbclient, forwarder
		}
		if err := first(); err != nil {
			return err
		}
		if err := second(); err != nil {
			return err
		}
		rss = append(rss, d.ru.Maxrss)
		fw = append(fw, d.secs)
		sc = append(sc, p.put)
		pg = append(pg, p.put+p.get)
		fmt.Printf("round %d: forwarder %.2f s, smbclient put %.2f s (%.2fx), forwarder peak RSS %.1f MiB\n",
			round+1, d.secs, p.put, p.put/d.secs, float64(d.ru.Maxrss)/1024)
		load, _ := os.ReadFile("/proc/loadavg")
		fmt.Printf("  CPU s: forwarder %.2f (delivery only), smbd %.2f, machine %.2f; smbclient %.2f, smbd %.2f, machine %.2f; load %s\n",
			d.cpu, d.smbd, d.machine, p.cpu, p.smbd, p.machine, strings.Join(strings.Fields(string(load))[:3], " "))
	}
	mf, ms := median(fw), median(sc)
	maxRSS := rss[0]
	for _, r := range rss {
		maxRSS = max(maxRSS, r)
	}
	size := float64(mib)
	fmt.Printf("forward %d MiB to //%s/scans (write + rename + read back + SHA-256 verify): median %.2f s = %.0f MiB/s\n", mib, env("SWLAB_DC_IP"), mf, size/mf)
	fmt.Printf("smbclient put of the same file:                                     median %.2f s = %.0f MiB/s\n", ms, size/ms)
	mpg := median(pg)
	fmt.Printf("(reference: smbclient put + get to /dev/null, the forwarder's bytes on the wire: median %.2f s; forwarder/that %.2fx)\n", mpg, mpg/mf)
	fmt.Printf("throughput forwarder/smbclient: %.2fx (target >= 0.9x); forwarder peak RSS %.1f MiB (target < 64 MiB)\n", ms/mf, float64(maxRSS)/1024)
	return nil
}

// fwdBench is the forward benchmark's setting: a folder of the lab DC's
// share (sub, seen locally as remoteDir), the scan (src) and smbclient's
// auth file in a work folder, and prev, the last copy on the share, which
// the next transfer removes first.
type fwdBench struct {
	sub, remoteDir, work, src, auth, prev string
}

// newFwdBench makes the share's folder and a scan of mib MiB on disk.
func newFwdBench(mib int) (*fwdBench, error) {
	b := &fwdBench{sub: "rxbench-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	b.remoteDir = filepath.Join(env("SCANWARDEN_LAB"), "dc", "shares", "scans", b.sub)
	if err := os.Mkdir(b.remoteDir, 0o777); err != nil {
		return nil, err
	}
	os.Chmod(b.remoteDir, 0o777)
	work, err := os.MkdirTemp("", "rxbench")
	if err != nil {
		os.RemoveAll(b.remoteDir)
		return nil, err
	}
	b.work, b.src, b.auth = work, filepath.Join(work, "scan.pdf"), filepath.Join(work, "auth")
	if err := b.writeScan(mib); err != nil {
		b.close()
		return nil, err
	}
	os.WriteFile(b.auth, []byte(fmt.Sprintf("username = alice\npassword = %s\ndomain = %s\n", env("SWLAB_PASSWORD"), env("SWLAB_DOMAIN"))), 0o600)
	return b, nil
}

func (b *fwdBench) close() {
	os.RemoveAll(b.remoteDir)
	os.RemoveAll(b.work)
}

// writeScan writes the scan: a valid PDF, as the receiver refuses a file
// whose content is no scan; on disk before the first round, else the
// kernel writes the fresh file back during it, against whichever side runs
// first (the forwarder).
func (b *fwdBench) writeScan(mib int) error {
	f, err := os.Create(b.src)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writePDF(f, int64(mib)<<20); err != nil {
		return err
	}
	return f.Sync()
}

// smbclient runs smbclient against the lab DC's scans share with cmds.
func (b *fwdBench) smbclient(cmds string) (*exec.Cmd, error) {
	c := exec.Command("smbclient", "//"+env("SWLAB_DC_IP")+"/scans", "-A", b.auth, "--use-kerberos=disabled", "-m", "SMB3", "-c", cmds)
	if out, err := c.CombinedOutput(); err != nil || strings.Contains(string(out), "NT_STATUS") {
		return c, fmt.Errorf("smbclient: %v %s", err, out)
	}
	return c, nil
}

// warmUp puts the scan once, untimed. Each transfer starts right after the
// copy before it was removed from the DC's share (this one is the first
// such copy): on this VM a write into page-cache pages just freed runs up
// to three times faster than one into pages long free (measured: 1 GiB
// puts took 3.4-4.9 s in a row while the earlier copies stayed, 1.2 s
// right after they were removed). Without this the side that runs second
// in a round was measured in the slow state and the ratio depended on the
// order.
func (b *fwdBench) warmUp() error {
	b.prev = filepath.Join(b.remoteDir, "warm-up.pdf")
	_, err := b.smbclient(fmt.Sprintf("cd %s; put %s warm-up.pdf", b.sub, b.src))
	return err
}

// fwdRound is one delivery through the forwarder: its time and CPU (the
// delivery only), smbd's and the machine's CPU meanwhile, the child's usage.
type fwdRound struct {
	secs, cpu, machine, smbd float64
	ru                       *syscall.Rusage
}

// viaForwarder delivers the scan by the forwarder, in its own process so
// its peak RSS is its own.
func (b *fwdBench) viaForwarder(round, idle int) (fwdRound, error) {
	var r fwdRound
	cmd := exec.Command(os.Args[0], "deliver-child", b.src+"|"+b.sub+"|"+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer cmd.Wait()
	out := bufio.NewReader(stdout)
	// the child has catalogued the scan: go
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		return r, fmt.Errorf("deliver child said %q (%v)", line, err)
	}
	if err := os.Remove(b.prev); err != nil {
		return r, err
	}
	m0, s0 := machineCPU(), smbdCPU()
	fmt.Fprintln(stdin, "go")
	// the delivery itself (logon, write, rename, read back, verify), not
	// the child's start-up and cataloguing
	rest, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil {
		return r, fmt.Errorf("deliver: %v %s", err, rest)
	}
	if _, err := fmt.Sscan(string(rest), &r.secs, &r.cpu); err != nil {
		return r, fmt.Errorf("deliver child said %q", rest)
	}
	smbdSettle(idle)
	r.machine, r.smbd = machineCPU()-m0, smbdCPU()-s0
	r.ru = cmd.ProcessState.SysUsage().(*syscall.Rusage)
	b.prev = filepath.Join(b.remoteDir, "scan.pdf")
	return r, nil
}

// putRound is one smbclient put of the scan (time, its CPU, smbd's and
// the machine's meanwhile) and the get that reads it back.
type putRound struct {
	put, get, cpu, machine, smbd float64
}

// viaSmbclient puts the same file with smbclient, then reads it back: the
// same bytes on the wire as the forwarder (a reference, not the target's).
func (b *fwdBench) viaSmbclient(round, idle int) (putRound, error) {
	var r putRound
	if err := os.Remove(b.prev); err != nil {
		return r, err
	}
	t1 := time.Now()
	m1, s1 := machineCPU(), smbdCPU()
	c, err := b.smbclient(fmt.Sprintf("cd %s; put %s ref-%d.pdf", b.sub, b.src, round))
	if err != nil {
		return r, err
	}
	r.put = time.Since(t1).Seconds()
	smbdSettle(idle)
	r.machine, r.smbd = machineCPU()-m1, smbdCPU()-s1
	r.cpu = cpuSeconds(c.ProcessState)
	b.prev = filepath.Join(b.remoteDir, fmt.Sprintf("ref-%d.pdf", round))
	t2 := time.Now()
	if _, err := b.smbclient(fmt.Sprintf("cd %s; get ref-%d.pdf /dev/null", b.sub, round)); err != nil {
		return r, fmt.Errorf("get: %w", err)
	}
	r.get = time.Since(t2).Seconds()
	return r, nil
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
// delivers it through receiver.DeliverNow (SMBRemote via smbcheck.Dial).
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

// selfCPU is this process's user+system CPU time so far, in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cpuSeconds is a finished process's user+system CPU time.
func cpuSeconds(ps *os.ProcessState) float64 { return (ps.UserTime() + ps.SystemTime()).Seconds() }

// machineCPU is the CPU time (user, nice, system, irq, softirq) the whole
// machine has spent since boot, in seconds: the difference across an
// operation shows what it cost the client and the lab server together
// (and whatever else ran meanwhile).
func machineCPU() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	var ticks float64
	for _, i := range []int{1, 2, 3, 6, 7} {
		if i < len(f) {
			v, _ := strconv.ParseFloat(f[i], 64)
			ticks += v
		}
	}
	return ticks / 100 // USER_HZ
}

// smbdCPU is the CPU time, in seconds, of the lab DC's smbd processes
// (its config file in their command line) with that of their waited-for
// children (the connections).
func smbdCPU() float64 { t, _ := smbdProcs(); return t }

// smbdSettle waits (up to 3 s) until the lab DC runs no more smbd
// processes than n: a finished client's connection process has exited
// and been reaped, so its CPU time shows in its parent's.
func smbdSettle(n int) {
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, k := smbdProcs(); k <= n {
			return
		}
	}
}

// smbdProcs returns smbdCPU and how many processes it summed.
func smbdProcs() (float64, int) {
	var k int
	conf := filepath.Join(env("SCANWARDEN_LAB"), "dc") + "/"
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks float64
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		open, close := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
		if open < 0 || close < open || !strings.HasPrefix(string(b[open+1:close]), "smbd") {
			continue
		}
		if cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(d), "cmdline")); !strings.Contains(string(cmd), conf) {
			continue
		}
		k++
		f := strings.Fields(string(b[close+1:])) // state ppid ... utime(12) stime(13) cutime(14) cstime(15)
		for _, i := range []int{11, 12, 13, 14} {
			if i < len(f) {
				v, _ := strconv.ParseFloat(f[i], 64)
				ticks += v
			}
		}
	}
	return ticks / 100, k
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ingest: N PDFs, one smbclient logon each, into a receiver on 127.0.0.1.
func ingest(arg string) error {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > 5000 {
		return errors.New("the number of scans must be 1..5000")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rxbench-ingest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	const pw = "Bench.Mfp-25"
	r, cfg, err := openReceiver(ctx, st, dir, pw)
	if err != nil {
		return err
	}
	defer r.Close()
	clock, err := watchInbox(filepath.Join(receiver.Inbox(cfg.DataDir), "bench"))
	if err != nil {
		return err
	}
	defer clock.close()
	upload, err := uploadScans(n, cfg.Port, pw)
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); clock.moved() < n && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	lat := clock.latencies()
	rows, _ := st.Scans().Scans(ctx, receiver.ScanQuery{})
	pct := func(p float64) float64 { return lat[min(len(lat)-1, int(float64(len(lat))*p))] }
	fmt.Printf("%d PDFs (200 KiB) put by smbclient, one logon each, in %.1f s; %d catalogued\n", n, upload.Seconds(), len(rows))
	if len(lat) > 0 {
		fmt.Printf("close -> catalogued: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms (target p99 < 2000 ms)\n",
			pct(0.5), pct(0.9), pct(0.99), lat[len(lat)-1])
	}
	if len(rows) != n || len(lat) != n {
		return fmt.Errorf("%d uploads, %d catalogued, %d measured", n, len(rows), len(lat))
	}
	return nil
}

// openReceiver runs a receiver (its own smbd) on a free port of
// 127.0.0.1 with one MFP account (swmfp, pw) and one destination folder,
// bench, that nothing is delivered from.
func openReceiver(ctx context.Context, st *store.Store, dir, pw string) (*receiver.Receiver, receiver.Config, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, receiver.Config{}, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := receiver.Config{DataDir: filepath.Join(dir, "rx"), Listen: netip.MustParseAddr("127.0.0.1"), Port: port, Share: "scans",
		Accounts: []samba.Account{{Name: "swmfp", Password: scanwarden.NewSecret(pw)}},
		Watch:    receiver.DefaultWatch, Forward: receiver.DefaultForward}
	r, err := receiver.New(cfg, st.Scans(), dests{{Name: "bench", Folder: "bench"}}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, cfg, err
	}
	return r, cfg, r.Open(ctx)
}

// uploadScans puts n PDFs of 200 KiB (each its own bytes) into the share's
// bench folder, one smbclient logon each, as MFPs do.
func uploadScans(n, port int, pw string) (time.Duration, error) {
	work, err := os.MkdirTemp("", "rxbench-src")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	p := filepath.Join(work, "s.pdf")
	t0 := time.Now()
	for i := 0; i < n; i++ {
		var b bytes.Buffer
		if err := writePDF(&b, 200<<10); err != nil {
			return 0, err
		}
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			return 0, err
		}
		c := exec.Command("smbclient", "//127.0.0.1/scans", "-p", strconv.Itoa(port), "-U", "swmfp%"+pw, "--use-kerberos=disabled",
			"-m", "SMB3", "-c", fmt.Sprintf("cd bench; put %s scan%05d.pdf", p, i))
		if out, err := c.CombinedOutput(); err != nil || strings.Contains(string(out), "NT_STATUS") {
			return 0, fmt.Errorf("smbclient %d: %v %s", i, err, out)
		}
	}
	return time.Since(t0), nil
}

// inboxClock times each file of an inbox folder from its last close after
// writing to its move out of the inbox (catalogued), by an inotify watch
// of its own.
type inboxClock struct {
	fd           int
	mu           sync.Mutex
	closed, gone map[string]time.Time
}

func watchInbox(dir string) (*inboxClock, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_FROM); err != nil {
		unix.Close(fd)
		return nil, err
	}
	c := &inboxClock{fd: fd, closed: map[string]time.Time{}, gone: map[string]time.Time{}}
	go c.read()
	return c, nil
}

func (c *inboxClock) read() {
	buf := make([]byte, 64<<10)
	for {
		k, err := unix.Read(c.fd, buf)
		if err != nil || k <= 0 {
			return
		}
		now := time.Now()
		c.mu.Lock()
		for off := 0; off+unix.SizeofInotifyEvent <= k; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_CLOSE_WRITE != 0 {
				c.closed[name] = now // the last close counts
			}
			if ev.Mask&unix.IN_MOVED_FROM != 0 {
				c.gone[name] = now
			}
		}
		c.mu.Unlock()
	}
}

// moved is how many files have left the inbox.
func (c *inboxClock) moved() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.gone)
}

// latencies are the close → moved times of the files seen both ways, in
// milliseconds, sorted.
func (c *inboxClock) latencies() []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lat []float64
	for name, t := range c.closed {
		if m, ok := c.gone[name]; ok {
			lat = append(lat, m.Sub(t).Seconds()*1000)
		}
	}
	sort.Float64s(lat)
	return lat
}

func (c *inboxClock) close() { unix.Close(c.fd) }
