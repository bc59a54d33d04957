package samba

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// portError says the port is taken; Owner names the program when it can be read.
type portError struct {
	Addr  string
	Owner string
	Err   error
}

func (e *portError) Error() string {
	if e.Owner != "" {
		return fmt.Sprintf("port %s is taken by %s", e.Addr, e.Owner)
	}
	return fmt.Sprintf("port %s is taken: %v", e.Addr, e.Err)
}

func (e *portError) Unwrap() error { return e.Err }

// Start makes sure smbd runs with the current config: it writes and
// validates smb.conf and the passdb, finds a running smbd by its pid file
// (reloading it when the config changed, restarting it when its addresses
// changed) or starts one in its own session. smbd outlives scanwarden.
func (s *Server) Start(ctx context.Context) error {
	if err := os.MkdirAll(s.cfg.Inbox, 0o750); err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	old, _ := os.ReadFile(s.cfg.confPath())
	changed, err := s.writeConfig(ctx)
	if err != nil {
		return err
	}
	if err := s.setAccounts(ctx); err != nil {
		return err
	}
	if pid := s.Find(); pid != 0 {
		s.pid.Store(int64(pid))
		if !changed {
			return nil
		}
		if sameListen(string(old), s.Config()) {
			if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
				return fmt.Errorf("reload smbd %d: %w", pid, err)
			}
			return nil
		}
		if err := s.Stop(ctx); err != nil {
			return err
		}
	}
	return s.spawn(ctx)
}

// sameListen says whether the old config binds the same addresses (a
// reload cannot move smbd's sockets).
func sameListen(old string, c Config) bool {
	n, err := c.Conf()
	if err != nil {
		return false
	}
	pick := func(conf string) string {
		var keep []string
		for _, l := range strings.Split(conf, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "interfaces =") || strings.HasPrefix(l, "smb ports =") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	return pick(old) == pick(n)
}

func (s *Server) spawn(ctx context.Context) error {
	for _, p := range s.cfg.ports() {
		if err := portFree(s.cfg.Listen, p); err != nil {
			return err
		}
	}
	os.Remove(s.cfg.pidFile())
	out, err := os.OpenFile(s.cfg.outputLog(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start smbd: %w", err)
	}
	defer out.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("start smbd: %w", err)
	}
	defer devnull.Close()
	cmd := exec.Command(s.bin.Smbd, s.cfg.SmbdArgs()...)
	// stdin /dev/null: in foreground mode smbd exits on EOF of a pipe; it
	// must outlive us. Its own session: our crash or process-group kill
	// does not reach it, and its exit signal to its group does not reach us.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "NOTIFY_SOCKET=") && !strings.HasPrefix(e, "LISTEN_") && !strings.HasPrefix(e, "WATCHDOG_") {
			env = append(env, e)
		}
	}
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start smbd: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it dies while we live
	deadline := time.NewTimer(15 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("smbd exited at start (%v): %s", err, tail(s.cfg.outputLog(), s.cfg.logFile()))
		case <-deadline.C:
			syscall.Kill(pid, syscall.SIGTERM)
			return fmt.Errorf("smbd did not listen on %s within 15 s: %s", net.JoinHostPort(s.cfg.Listen.String(), strconv.Itoa(s.cfg.Port)), tail(s.cfg.outputLog(), s.cfg.logFile()))
		case <-ctx.Done():
			syscall.Kill(pid, syscall.SIGTERM)
			return ctx.Err()
		case <-tick.C:
			if Listening(s.cfg.Listen, s.cfg.Port) {
				s.pid.Store(int64(pid))
				return nil
			}
		}
	}
}

// Listening says whether something accepts a TCP connection on ip:port
// within 200 ms.
func Listening(ip netip.Addr, port int) bool {
	c, err := net.DialTimeout("tcp", netip.AddrPortFrom(ip, uint16(port)).String(), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// portFree binds ip:port for a moment; when that fails it names the owner.
func portFree(ip netip.Addr, port int) error {
	addr := netip.AddrPortFrom(ip, uint16(port)).String()
	l, err := net.Listen("tcp", addr)
	if err == nil {
		l.Close()
		return nil
	}
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return badConfig("listen", ip.String(), "is not an address of this machine")
	}
	if errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("port %s: %w (binding a port below 1024 needs root or CAP_NET_BIND_SERVICE)", addr, err)
	}
	return &portError{Addr: addr, Owner: portOwner(port), Err: err}
}

// portOwner names the process listening on port, from /proc (best effort).
func portOwner(port int) string {
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); ok && err == nil && int(p) == port {
				inodes[fields[9]] = true
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return ""
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
				return fmt.Sprintf("%s (pid %d)", strings.TrimSpace(string(comm)), pid)
			}
		}
	}
	return ""
}

// tail is the last lines of smbd's output and log, for a start error.
func tail(files ...string) string {
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		ls := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(ls) > 6 {
			ls = ls[len(ls)-6:]
		}
		lines = append(lines, ls...)
	}
	return strings.Join(lines, " | ")
}

// Stop ends the smbd (TERM, then KILL after 10 s) and its children.
func (s *Server) Stop(ctx context.Context) error {
	pid := s.Pid()
	if pid == 0 {
		pid = s.Find()
	}
	if pid == 0 {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop smbd %d: %w", pid, err)
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	deadline := time.Now().Add(10 * time.Second)
	// smbd leads its own session: the per-connection children it forked
	// are in its process group and may outlive it by a moment (writing
	// their last log lines, closing a client). Stopped means all of them.
	for s.cfg.isOurs(pid) || groupAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	s.pid.Store(0)
	return nil
}

// groupAlive says whether a process of process group pgid is left.
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}

// Reload asks the running smbd to re-read its config (after SetAllow).
func (s *Server) Reload() error {
	pid := s.Pid()
	if pid == 0 {
		return errors.New("reload smbd: not running")
	}
	return syscall.Kill(pid, syscall.SIGHUP)
}
