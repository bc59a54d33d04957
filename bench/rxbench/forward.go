package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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
