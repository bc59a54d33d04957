package samba

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/scanwarden/scanwarden/internal/proc"
)

// errSambaMissing says Samba is not installed.
var errSambaMissing = errors.New("samba is not installed (Debian: apt-get install samba)")

func (c Config) bin() (Bin, error) {
	b := c.Bin
	find := func(name, given string) (string, error) {
		if given != "" {
			if !isExec(given) {
				return "", fmt.Errorf("%s: %w", given, errSambaMissing)
			}
			return given, nil
		}
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/usr/sbin", "/usr/bin", "/usr/local/samba/sbin"} {
			if p := filepath.Join(dir, name); isExec(p) {
				return p, nil
			}
		}
		return "", fmt.Errorf("%s not found: %w", name, errSambaMissing)
	}
	var err error
	if b.Smbd, err = find("smbd", b.Smbd); err != nil {
		return b, err
	}
	if b.Testparm, err = find("testparm", b.Testparm); err != nil {
		return b, err
	}
	if b.Smbpasswd, err = find("smbpasswd", b.Smbpasswd); err != nil {
		return b, err
	}
	return b, nil
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Server manages scanwarden's own smbd: it writes and validates its config,
// keeps its passdb, starts it in its own session (so the daemon's crash does
// not cut transfers in flight) and finds it again by its pid file.
type Server struct {
	cfg Config
	bin Bin
	pid atomic.Int64 // the running smbd (0: none known); read by the watcher
	mu  sync.Mutex   // cfg.Allow (SetAllow); one writeConfig at a time
}

// New checks the config and finds the Samba programs.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, err := cfg.bin()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, bin: b}, nil
}

// Config is the config the instance was made with.
func (s *Server) Config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	c.Allow = slices.Clone(c.Allow)
	return c
}

// SetAllow replaces the allowlist and writes smb.conf (validated by
// testparm; when refused, the old list and file stay). It reports whether
// smb.conf changed; reloading smbd is the caller's (Reload).
func (s *Server) SetAllow(ctx context.Context, allow []netip.Prefix) (bool, error) {
	c := s.Config()
	c.Allow = allow
	if err := c.Validate(); err != nil {
		return false, err
	}
	s.mu.Lock()
	old := s.cfg.Allow
	s.cfg.Allow = slices.Clone(allow)
	s.mu.Unlock()
	changed, err := s.writeConfig(ctx)
	if err != nil {
		s.mu.Lock()
		s.cfg.Allow = old
		s.mu.Unlock()
		return false, err
	}
	return changed, nil
}

// HandAllow is SetAllow for the installed layout: the list goes to root
// as data (AllowFile next to the inbox), never into an smb.conf.
func (s *Server) HandAllow(allow []netip.Prefix) (bool, error) {
	c := s.Config()
	c.Allow = allow
	if err := c.Validate(); err != nil {
		return false, err
	}
	changed, err := WriteAllowFile(AllowFile(filepath.Dir(c.Inbox)), allow)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	s.cfg.Allow = slices.Clone(allow)
	s.mu.Unlock()
	return changed, nil
}

// confPath is the smb.conf scanwarden writes.
func (s *Server) confPath() string { return s.cfg.confPath() }

// AuditLog is smbd's log file, where full_audit writes.
func (s *Server) AuditLog() string { return s.cfg.auditLog() }

// Pid is the running smbd's pid (0 when none is known).
func (s *Server) Pid() int { return int(s.pid.Load()) }

// writeConfig renders smb.conf, validates it with testparm and only then
// puts it in place; when validation fails the file in place (and the smbd
// running with it) is kept. It reports whether the file changed.
func (s *Server) writeConfig(ctx context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	conf, err := s.cfg.Conf()
	if err != nil {
		return false, err
	}
	if err := s.cfg.makeDirs(); err != nil {
		return false, err
	}
	old, _ := os.ReadFile(s.cfg.confPath())
	if string(old) == conf {
		return false, nil
	}
	tmp := s.cfg.confPath() + ".new"
	if err := os.WriteFile(tmp, []byte(conf), 0o644); err != nil {
		return false, fmt.Errorf("write smb.conf: %w", err)
	}
	if err := s.testparm(ctx, tmp); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(tmp, s.cfg.confPath()); err != nil {
		return false, fmt.Errorf("write smb.conf: %w", err)
	}
	return true, nil
}

// makeDirs makes Dir and smbd's folders in it. Dir, run/ (the pid file)
// and lock/ (smbd wants 0755) can be read by the daemon's user, who finds
// smbd by its pid file; log/ is given that user's group by the root side
// (PrepareShare); the rest is smbd's alone.
func (c Config) makeDirs() error {
	for _, d := range []string{"", "run", "lock", "state", "cache", "private", "ncalrpc", "bind-dns", "log"} {
		mode := os.FileMode(0o700)
		switch d {
		case "", "lock", "run":
			mode = 0o755
		case "log":
			mode = 0o750
		}
		p := filepath.Join(c.Dir, d)
		if err := os.MkdirAll(p, mode); err != nil {
			return fmt.Errorf("smbd dirs: %w", err)
		}
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("smbd dirs: %w", err)
		}
	}
	return nil
}

// testparmError is a config testparm refused; Output is what it said.
type testparmError struct{ Output string }

func (e *testparmError) Error() string {
	return "testparm refused the generated smb.conf: " + strings.TrimSpace(e.Output)
}

func (s *Server) testparm(ctx context.Context, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin.Testparm, "-s", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	var bad []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "Unknown parameter") || strings.Contains(l, "Ignoring invalid value") ||
			strings.Contains(l, "Error loading services") || strings.HasPrefix(l, "ERROR") {
			bad = append(bad, l)
		}
	}
	if err != nil || len(bad) > 0 {
		if len(bad) == 0 {
			bad = []string{text, err.Error()}
		}
		return &testparmError{Output: strings.Join(bad, "\n")}
	}
	return nil
}

// setAccounts creates the MFP accounts in smbd's own passdb (and the Unix
// users they need, without a home or a shell, when missing), non-interactively.
func (s *Server) setAccounts(ctx context.Context) error {
	for _, a := range s.cfg.Accounts {
		if _, err := user.Lookup(a.Name); err != nil {
			if os.Geteuid() != 0 {
				return fmt.Errorf("account %s: no Unix user of that name, and only root can add one: %w", a.Name, err)
			}
			out, err := exec.CommandContext(ctx, "useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", a.Name).CombinedOutput()
			if err != nil {
				return fmt.Errorf("account %s: useradd: %v: %s", a.Name, err, strings.TrimSpace(string(out)))
			}
			if err := s.recordCreatedUser(a.Name); err != nil {
				return err
			}
		}
		cmd := exec.CommandContext(ctx, s.bin.Smbpasswd, "-c", s.cfg.confPath(), "-s", "-a", a.Name)
		pw := a.Password.Reveal()
		cmd.Stdin = strings.NewReader(pw + "\n" + pw + "\n")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("account %s: smbpasswd: %v: %s", a.Name, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// createdUsersFile lists, one a line, the Unix users setAccounts added
// (Dir/created-users): the Debian package's purge removes them.
const createdUsersFile = "created-users"

func (s *Server) recordCreatedUser(name string) error {
	f, err := os.OpenFile(filepath.Join(s.cfg.Dir, createdUsersFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("account %s: record it for removal at purge: %w", name, err)
	}
	_, err = fmt.Fprintln(f, name)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("account %s: record it for removal at purge: %w", name, err)
	}
	return nil
}

// Find returns the pid of the smbd this config runs, from its pid file,
// or 0 when none runs.
func (s *Server) Find() int { return Find(s.cfg.Dir) }

// Track finds the smbd this config runs (Find) and follows it from now on
// (Pid, Alive, Stop, Reload): an smbd that someone else started, its own
// unit in the installed layout.
func (s *Server) Track() { s.pid.Store(int64(s.Find())) }

// Find returns the pid of the smbd whose folder is dir (Config.Dir), from
// its pid file, or 0 when none runs.
func Find(dir string) int {
	c := Config{Dir: dir}
	b, err := os.ReadFile(c.pidFile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0
	}
	if !c.isOurs(pid) {
		return 0
	}
	return pid
}

// isOurs says whether pid is a live smbd started with this config.
func (c Config) isOurs(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		// /proc may hide another user's processes (ProtectProc=invisible
		// under systemd, smbd in its own unit): the pid file in our own
		// folder and a signal-0 probe are what is left.
		err := syscall.Kill(pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) == 0 || !strings.HasSuffix(args[0], "smbd") {
		return false
	}
	for i, a := range args {
		if a == c.confPath() || a == "--configfile="+c.confPath() || (a == "-s" && i+1 < len(args) && args[i+1] == c.confPath()) {
			return !proc.Zombie(pid)
		}
	}
	return false
}

// Alive reports whether the smbd last started or found still runs.
func (s *Server) Alive() bool { pid := s.Pid(); return pid != 0 && s.cfg.isOurs(pid) }
