package samba

import (
	"fmt"
	"net/netip"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden"
)

// Config is what scanwarden's own smbd serves. Zero means zero: the
// caller fills defaults (DefaultShare, port 445) where it reads its config.
type Config struct {
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
	Bin Bin
}

// Account is one MFP login on the fallback share.
type Account struct {
	Name     string
	Password scanwarden.Secret
}

// Bin names the Samba programs.
type Bin struct{ Smbd, Testparm, Smbpasswd string }

// DefaultShare is the share's name when the config gives none;
// DefaultAccount the MFPs' login name on it.
const (
	DefaultShare   = "scans"
	DefaultAccount = "mfp"
)

// badConfig is the *scanwarden.FieldError for field; value shows quoted.
func badConfig(field, value, reason string) error {
	var v any
	if value != "" {
		v = strconv.Quote(value)
	}
	return &scanwarden.FieldError{Field: field, Value: v, Reason: reason}
}

// Validate names the first setting that cannot be used.
func (c Config) Validate() error {
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

func (c Config) confPath() string  { return filepath.Join(c.Dir, "smb.conf") }
func (c Config) pidFile() string   { return filepath.Join(c.Dir, "run", "smbd.pid") }
func (c Config) logDir() string    { return filepath.Join(c.Dir, "log") }
func (c Config) logFile() string   { return filepath.Join(c.logDir(), "log.smbd") } // what smbd makes of -l logDir
func (c Config) auditLog() string  { return c.logFile() }
func (c Config) outputLog() string { return filepath.Join(c.Dir, "log", "smbd.out") }

func (c Config) ports() []int {
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
	// deadtimeMinutes drops a logged-on session idle this long with no
	// file open (Samba's default is a week). MFPs connect per job.
	deadtimeMinutes = 15
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
func (c Config) Conf() (string, error) {
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
func (c Config) globalSection(w func(k, v string)) {
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
	// what the daemon learns each MFP's client from (logon.go).
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
	w("deadtime", strconv.Itoa(deadtimeMinutes))
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
func (c Config) shareSection(w func(k, v string), force string) {
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
func (c Config) SmbdArgs() []string {
	return []string{"--foreground", "--no-process-group", "-s", c.confPath(), "-l", c.logDir()}
}
