package receiver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
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

	"github.com/scanwarden/scanwarden"
)

// SambaConfig is what scanwarden's own smbd serves. Zero means zero: the
// caller fills defaults (DefaultShare, port 445) where it reads its config.
type SambaConfig struct {
	// Dir holds smb.conf and smbd's folders (pid, lock, state, cache,
	// private, log). In the installed layout it is root's own
	// (/var/lib/scanwarden-smbd): nothing under it is the daemon's.
	Dir      string
	Inbox    string     // the share's folder
	Listen   netip.Addr // the one address smbd binds (bind interfaces only)
	Port     int        // SMB port; 139 is served too when SMB1 is on and Port is 445
	Share    string     // share name
	Accounts []Account  // the MFP accounts, local to this smbd
	// SMB1 lets old firmware in: SMB1 (NT1) and NTLMv1, for this instance
	// only. A standing security warning while on.
	SMB1 bool
	// Allow lists the networks that may connect (the MFPs' addresses);
	// empty = any address that reaches Listen. Others are dropped before
	// any SMB is read (hosts allow / hosts deny).
	Allow []netip.Prefix
	// ForceUser owns every file the MFPs write (the daemon's own user, so
	// the watcher may move them); "" = the user running scanwarden.
	ForceUser string
	// Bin names the Samba programs; zero = found in PATH and /usr/sbin.
	Bin SambaBin
}

// Account is one MFP login on the fallback share.
type Account struct {
	Name     string
	Password scanwarden.Secret
}

// SambaBin names the Samba programs.
type SambaBin struct{ Smbd, Testparm, Smbpasswd string }

// DefaultShare is the share's name when the config gives none;
// DefaultAccount the MFPs' login name on it.
const (
	DefaultShare   = "scans"
	DefaultAccount = "mfp"
)

// ConfigError is a setting that cannot be used: its field, its value
// (quoted as given) and why.
type ConfigError = scanwarden.FieldError

// badConfig is the *ConfigError for field; value shows quoted.
func badConfig(field, value, reason string) error {
	var v any
	if value != "" {
		v = strconv.Quote(value)
	}
	return &ConfigError{Field: field, Value: v, Reason: reason}
}

// Validate names the first setting that cannot be used.
func (c SambaConfig) Validate() error {
	switch {
	case c.Dir == "" || !filepath.IsAbs(c.Dir):
		return badConfig("dir", c.Dir, "must be an absolute path")
	case c.Inbox == "" || !filepath.IsAbs(c.Inbox):
		return badConfig("inbox", c.Inbox, "must be an absolute path")
	case !c.Listen.IsValid() || c.Listen.IsUnspecified():
		return badConfig("listen", c.Listen.String(), "must be one address of this machine (the share binds only there)")
	case c.Port < 1 || c.Port > 65535:
		return badConfig("port", strconv.Itoa(c.Port), "must be 1–65535")
	case !validShareName(c.Share):
		return badConfig("share", c.Share, "must be 1–80 letters, digits, '-', '_' or '.'")
	}
	for _, p := range c.Allow {
		if !p.IsValid() {
			return badConfig("allow", p.String(), "must be an address or a network (CIDR)")
		}
	}
	seen := map[string]bool{}
	for _, a := range c.Accounts {
		if !validAccountName(a.Name) {
			return badConfig("account", a.Name, "must be 1–32 lower-case letters, digits, '-', '_' starting with a letter")
		}
		if seen[a.Name] {
			return badConfig("account", a.Name, "given twice")
		}
		seen[a.Name] = true
		if a.Password.IsZero() || strings.ContainsAny(a.Password.Reveal(), "\r\n") {
			return badConfig("password", "", "empty or contains a line break")
		}
	}
	return nil
}

func validShareName(s string) bool {
	if s == "" || len(s) > 80 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func validAccountName(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (c SambaConfig) confPath() string  { return filepath.Join(c.Dir, "smb.conf") }
func (c SambaConfig) pidFile() string   { return filepath.Join(c.Dir, "run", "smbd.pid") }
func (c SambaConfig) logDir() string    { return filepath.Join(c.Dir, "log") }
func (c SambaConfig) logFile() string   { return filepath.Join(c.logDir(), "log.smbd") } // what smbd makes of -l logDir
func (c SambaConfig) auditLog() string  { return c.logFile() }
func (c SambaConfig) outputLog() string { return filepath.Join(c.Dir, "log", "smbd.out") }

func (c SambaConfig) ports() []int {
	if c.SMB1 && c.Port == 445 {
		return []int{445, 139} // old firmware may know only 139
	}
	return []int{c.Port}
}

// The bounds the managed smbd runs under (see Conf). Each TCP connection is
// one smbd process; a connection that never gets as far as a tree connect
// is dropped by smbd itself after 60 s (hard-coded in Samba), one that
// logged on and sits idle without an open file after deadtime.
const (
	// MaxSmbdProcesses bounds smbd's children: a connection beyond it is
	// closed at accept, before smbd forks. An office's MFPs send one job per
	// connection; 64 leaves room for many at once.
	MaxSmbdProcesses = 64
	// DeadtimeMinutes drops a logged-on session idle this long with no
	// file open (Samba's default is a week). MFPs connect per job.
	DeadtimeMinutes = 15
)

// hostsAllow renders Allow for smb.conf as words Samba's hosts allow reads
// as meant: network/length, except that Samba takes a length of three
// digits for a netmask written as an address ("/128" → 0.0.0.128, which
// masks nothing: every IPv6 host matched), so an IPv6 network of /100 or
// longer is written with its netmask in full; an IPv4-mapped network is
// written as the IPv4 one it is (Samba matched every IPv4 host to
// "::ffff:10.0.0.9/128").
func hostsAllow(ps []netip.Prefix) string {
	var out []string
	for _, p := range ps {
		p = unmapPrefix(p.Masked())
		if p.Addr().Is4() || p.Bits() < 100 {
			out = append(out, p.String())
			continue
		}
		var mask [16]byte
		for i := range p.Bits() {
			mask[i/8] |= 0x80 >> (i % 8)
		}
		out = append(out, p.Addr().String()+"/"+netip.AddrFrom16(mask).String())
	}
	return strings.Join(out, " ")
}

// unmapPrefix is an IPv4-mapped IPv6 network (::ffff:a.b.c.d/96 and
// longer) as the IPv4 network it names; any other as it is.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// withSelf is allow plus self (as a host prefix) unless allow covers it.
func withSelf(allow []netip.Prefix, self netip.Addr) []netip.Prefix {
	for _, p := range allow {
		if p.Contains(self) {
			return allow
		}
	}
	return append(slices.Clone(allow), netip.PrefixFrom(self, self.BitLen()))
}

// Conf renders the complete smb.conf. Every path smbd writes is under Dir;
// nothing of the host's /etc/samba is read.
func (c SambaConfig) Conf() (string, error) {
	if err := c.Validate(); err != nil {
		return "", err
	}
	force := c.ForceUser
	if force == "" {
		u, err := user.Current()
		if err != nil {
			return "", fmt.Errorf("smb.conf: current user: %w", err)
		}
		force = u.Username
	}
	var b strings.Builder
	w := func(k, v string) { fmt.Fprintf(&b, "\t%s = %s\n", k, v) }
	b.WriteString("# Written by scanwarden; every change here is overwritten at the next start.\n[global]\n")
	c.globalSection(w)
	fmt.Fprintf(&b, "\n[%s]\n", c.Share)
	c.shareSection(w, force)
	return b.String(), nil
}

// globalSection writes smb.conf's [global] section with w: a standalone server on
// the configured address and ports, its state under Dir, bounded against
// the LAN, no symlinks.
func (c SambaConfig) globalSection(w func(k, v string)) {
	var ports []string
	for _, p := range c.ports() {
		ports = append(ports, strconv.Itoa(p))
	}
	d := func(name string) string { return filepath.Join(c.Dir, name) }
	w("netbios name", "SCANWARDEN")
	w("workgroup", "WORKGROUP")
	w("server role", "standalone server")
	w("security", "user")
	w("interfaces", c.Listen.String())
	w("bind interfaces only", "yes")
	w("smb ports", strings.Join(ports, " "))
	w("disable netbios", "yes")
	w("pid directory", d("run"))
	w("lock directory", d("lock"))
	w("state directory", d("state"))
	w("cache directory", d("cache"))
	w("private dir", d("private"))
	w("ncalrpc dir", d("ncalrpc"))
	w("binddns dir", d("bind-dns"))
	w("passdb backend", "tdbsam:"+d("private/passdb.tdb"))
	w("log file", c.logFile())
	w("max log size", "10000")
	// auth_json_audit:3: one JSON line per session setup, with the
	// client's address, NTLM version or Kerberos, workstation and user —
	// what the daemon learns each MFP's client from (observe.go).
	w("log level", "1 auth_json_audit:3")
	w("debug pid", "yes")
	w("map to guest", "never")
	w("restrict anonymous", "2")
	w("load printers", "no")
	w("printing", "bsd")
	w("printcap name", "/dev/null")
	w("disable spoolss", "yes")
	w("usershare path", "")
	w("server signing", "auto")
	// Bounds against a flood or idle holders from the LAN.
	w("max smbd processes", strconv.Itoa(MaxSmbdProcesses))
	w("deadtime", strconv.Itoa(DeadtimeMinutes))
	// With multi-channel, smbd hands every connection that names the same
	// client GUID to one process, past max smbd processes: 300 of them
	// held 826 descriptors in one smbd. MFPs use one connection per job.
	w("server multi channel support", "no")
	if len(c.Allow) > 0 {
		// The box's own listen address too: doctor and `receiver status`
		// log on from it to see that the share works (ProbeShare). Only this
		// box connects from it: over IPv4 Linux drops a packet from outside
		// that carries one of its own addresses as source (accept_local 0);
		// over IPv6 a forged one cannot finish the TCP handshake (the
		// answer goes to the box itself). Local users of the box can reach
		// the share from it, as they can read its allowlist.
		w("hosts allow", hostsAllow(withSelf(c.Allow, c.Listen)))
		w("hosts deny", "ALL")
	}
	// No symlinks, created or followed: with SMB1 on, Samba's default unix
	// extensions would let a client create a link to any path, which the
	// share would then serve.
	w("unix extensions", "no")
	w("wide links", "no")
	w("follow symlinks", "no")
	if c.SMB1 {
		w("server min protocol", "NT1")
		w("ntlm auth", "ntlmv1-permitted")
	} else {
		w("server min protocol", "SMB2_02")
		w("ntlm auth", "ntlmv2-only")
	}
}

// shareSection writes the share's section with w: the inbox, writable by the
// accounts only, every file made as force and audited.
func (c SambaConfig) shareSection(w func(k, v string), force string) {
	var users []string
	for _, a := range c.Accounts {
		users = append(users, a.Name)
	}
	w("path", c.Inbox)
	w("read only", "no")
	w("guest ok", "no")
	w("browseable", "yes")
	if len(users) > 0 {
		w("valid users", strings.Join(users, " "))
	} else {
		w("valid users", "+nogroup-scanwarden-none")
	}
	w("force user", force)
	w("create mask", "0640")
	w("directory mask", "0750")
	w("vfs objects", "full_audit")
	w("full_audit:prefix", "%U|%I|%m|%R")
	w("full_audit:success", "connect create_file pwrite_send renameat unlinkat close ftruncate fntimes disconnect")
	w("full_audit:failure", "none")
	w("full_audit:syslog", "false")
	w("full_audit:log_secdesc", "false")
}

// SmbdArgs is smbd's command line for this config (after the program):
// in the foreground, in no process group of its own, with its log under
// Dir from its first line (-l: smbd would otherwise open Samba's compiled-in
// /var/log/samba before it reads smb.conf, read-only under the unit's
// ProtectSystem=strict). scanwarden-smbd.service's ExecStart= is the same.
func (c SambaConfig) SmbdArgs() []string {
	return []string{"--foreground", "--no-process-group", "-s", c.confPath(), "-l", c.logDir()}
}

// ErrSambaMissing says Samba is not installed.
var ErrSambaMissing = errors.New("samba is not installed (Debian: apt-get install samba)")

func (c SambaConfig) bin() (SambaBin, error) {
	b := c.Bin
	find := func(name, given string) (string, error) {
		if given != "" {
			if !isExec(given) {
				return "", fmt.Errorf("%s: %w", given, ErrSambaMissing)
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
		return "", fmt.Errorf("%s not found: %w", name, ErrSambaMissing)
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

// Samba manages scanwarden's own smbd: it writes and validates its config,
// keeps its passdb, starts it in its own session (so the daemon's crash does
// not cut transfers in flight) and finds it again by its pid file.
type Samba struct {
	cfg SambaConfig
	bin SambaBin
	pid atomic.Int64 // the running smbd (0: none known); read by the watcher
	mu  sync.Mutex   // cfg.Allow (SetAllow); one WriteConfig at a time
}

// NewSamba checks the config and finds the Samba programs.
func NewSamba(cfg SambaConfig) (*Samba, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b, err := cfg.bin()
	if err != nil {
		return nil, err
	}
	return &Samba{cfg: cfg, bin: b}, nil
}

// Config is the config the instance was made with.
func (s *Samba) Config() SambaConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cfg
	c.Allow = slices.Clone(c.Allow)
	return c
}

// SetAllow replaces the allowlist and writes smb.conf (validated by
// testparm; when refused, the old list and file stay). It reports whether
// smb.conf changed; reloading smbd is the caller's (Reload).
func (s *Samba) SetAllow(ctx context.Context, allow []netip.Prefix) (bool, error) {
	c := s.Config()
	c.Allow = allow
	if err := c.Validate(); err != nil {
		return false, err
	}
	s.mu.Lock()
	old := s.cfg.Allow
	s.cfg.Allow = slices.Clone(allow)
	s.mu.Unlock()
	changed, err := s.WriteConfig(ctx)
	if err != nil {
		s.mu.Lock()
		s.cfg.Allow = old
		s.mu.Unlock()
		return false, err
	}
	return changed, nil
}

// handAllow is SetAllow for the installed layout: the list goes to root
// as data (AllowFile next to the inbox), never into an smb.conf.
func (s *Samba) handAllow(allow []netip.Prefix) (bool, error) {
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

// ConfPath is the smb.conf scanwarden writes.
func (s *Samba) ConfPath() string { return s.cfg.confPath() }

// AuditLog is smbd's log file, where full_audit writes.
func (s *Samba) AuditLog() string { return s.cfg.auditLog() }

// Pid is the running smbd's pid (0 when none is known).
func (s *Samba) Pid() int { return int(s.pid.Load()) }

// WriteConfig renders smb.conf, validates it with testparm and only then
// puts it in place; when validation fails the file in place (and the smbd
// running with it) is kept. It reports whether the file changed.
func (s *Samba) WriteConfig(ctx context.Context) (bool, error) {
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
func (c SambaConfig) makeDirs() error {
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

// TestparmError is a config testparm refused; Output is what it said.
type TestparmError struct{ Output string }

func (e *TestparmError) Error() string {
	return "testparm refused the generated smb.conf: " + strings.TrimSpace(e.Output)
}

func (s *Samba) testparm(ctx context.Context, path string) error {
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
		return &TestparmError{Output: strings.Join(bad, "\n")}
	}
	return nil
}

// SetAccounts creates the MFP accounts in smbd's own passdb (and the Unix
// users they need, without a home or a shell, when missing), non-interactively.
func (s *Samba) SetAccounts(ctx context.Context) error {
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

// CreatedUsersFile lists, one a line, the Unix users SetAccounts added
// (Dir/created-users): the Debian package's purge removes them.
const CreatedUsersFile = "created-users"

func (s *Samba) recordCreatedUser(name string) error {
	f, err := os.OpenFile(filepath.Join(s.cfg.Dir, CreatedUsersFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
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
func (s *Samba) Find() int {
	b, err := os.ReadFile(s.cfg.pidFile())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0
	}
	if !s.isOurs(pid) {
		return 0
	}
	return pid
}

// isOurs says whether pid is a live smbd started with this config.
func (s *Samba) isOurs(pid int) bool {
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
		if a == s.cfg.confPath() || a == "--configfile="+s.cfg.confPath() || (a == "-s" && i+1 < len(args) && args[i+1] == s.cfg.confPath()) {
			return !isZombie(pid)
		}
	}
	return false
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// Alive reports whether the smbd last started or found still runs.
func (s *Samba) Alive() bool { pid := s.Pid(); return pid != 0 && s.isOurs(pid) }

// PortError says the port is taken; Owner names the program when it can be read.
type PortError struct {
	Addr  string
	Owner string
	Err   error
}

func (e *PortError) Error() string {
	if e.Owner != "" {
		return fmt.Sprintf("port %s is taken by %s", e.Addr, e.Owner)
	}
	return fmt.Sprintf("port %s is taken: %v", e.Addr, e.Err)
}

func (e *PortError) Unwrap() error { return e.Err }

// Start makes sure smbd runs with the current config: it writes and
// validates smb.conf and the passdb, finds a running smbd by its pid file
// (reloading it when the config changed, restarting it when its addresses
// changed) or starts one in its own session. smbd outlives scanwarden.
func (s *Samba) Start(ctx context.Context) error {
	if err := os.MkdirAll(s.cfg.Inbox, 0o750); err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	old, _ := os.ReadFile(s.cfg.confPath())
	changed, err := s.WriteConfig(ctx)
	if err != nil {
		return err
	}
	if err := s.SetAccounts(ctx); err != nil {
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
func sameListen(old string, c SambaConfig) bool {
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

func (s *Samba) spawn(ctx context.Context) error {
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
			if listening(s.cfg.Listen, s.cfg.Port) {
				s.pid.Store(int64(pid))
				return nil
			}
		}
	}
}

func listening(ip netip.Addr, port int) bool {
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
	return &PortError{Addr: addr, Owner: portOwner(port), Err: err}
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
func (s *Samba) Stop(ctx context.Context) error {
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
	for s.isOurs(pid) || groupAlive(pid) {
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

// Reload asks the running smbd to re-read its config (after WriteConfig).
func (s *Samba) Reload() error {
	pid := s.Pid()
	if pid == 0 {
		return errors.New("reload smbd: not running")
	}
	return syscall.Kill(pid, syscall.SIGHUP)
}
