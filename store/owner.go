package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A ledger row's owner names the process that reserved it, uniquely on one
// machine across reboots: "boot-id/pid/start-time" (start time in clock
// ticks since boot, field 22 of /proc/PID/stat). A store is a local file,
// so every process sharing it shares the machine and its /proc.

var (
	selfOnce  sync.Once
	selfOwner string
)

// processOwner is this process's owner string; "" when /proc cannot tell
// (then its rows are judged as rows of a process that may be alive).
func processOwner() string {
	selfOnce.Do(func() {
		boot, err := bootID()
		if err != nil {
			return
		}
		pid := os.Getpid()
		start, err := startTime(pid)
		if err != nil {
			return
		}
		selfOwner = boot + "/" + strconv.Itoa(pid) + "/" + start
	})
	return selfOwner
}

func bootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

// startTime reads field 22 of /proc/PID/stat (after the command name, which
// is in parentheses and may hold spaces).
func startTime(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", errors.New("no command name in /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): field 22 is f[19].
	if len(f) < 20 {
		return "", errors.New("short /proc stat")
	}
	return f[19], nil
}

// ownerGone reports whether the process that wrote owner has certainly
// ended: the machine rebooted since, or its pid is gone or belongs to a
// process started at another time. A row from before owners were recorded
// ("") is from a process that ran an older scanwarden, which an upgrade
// ended. When /proc cannot tell (e.g. mounted hidepid, hiding other users'
// processes), the owner is taken as alive.
func ownerGone(owner string) bool {
	if owner == "" {
		return true
	}
	if owner == processOwner() {
		return false
	}
	parts := strings.Split(owner, "/")
	if len(parts) != 3 {
		return false
	}
	boot, err := bootID()
	if err != nil {
		return false
	}
	if parts[0] != boot {
		return true
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	start, err := startTime(pid)
	switch {
	case err == nil:
		return start != parts[2]
	case errors.Is(err, fs.ErrNotExist):
		// Gone, unless /proc hides other users' processes from us: pid 1
		// (root's) is always there when it does not.
		_, err := os.Stat("/proc/1/stat")
		return err == nil
	}
	return false
}
