package main

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

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
