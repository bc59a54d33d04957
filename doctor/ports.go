package doctor

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/sockets"
)

type (
	socket = sockets.Socket
	proc   = sockets.Proc
)

// portWant is one port the box needs.
type portWant struct {
	proto      string
	port       int
	label      string
	configured bool // a configured listener needs it (else only a warning)
	// only is the one address the listener binds (the fallback share binds
	// only receiver.listen); zero: every address.
	only netip.Addr
}

// clashes says whether a socket bound to addr takes the port from w: it is
// bound to w's address or to every address, or w binds every address.
func (w portWant) clashes(addr string) bool {
	if !w.only.IsValid() {
		return true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return true
	}
	a = a.Unmap()
	return a.IsUnspecified() || a == w.only.Unmap()
}

// wantedPorts are the ports cfg needs.
func wantedPorts(cfg config.Config) []portWant {
	var w []portWant
	add := func(proto, addr, label string, configured bool) {
		host, p, err := net.SplitHostPort(addr)
		if err != nil {
			return
		}
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			pw := portWant{proto: proto, port: n, label: label, configured: configured}
			if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() && strings.HasPrefix(label, "the fallback share") {
				pw.only = ip
			}
			w = append(w, pw)
		}
	}
	// The fallback share (the receiver) binds 445 (and 139 for SMB1).
	if r := cfg.Receiver; r.Enabled {
		host, port := r.Listen, "445"
		if h, p, err := net.SplitHostPort(r.Listen); err == nil {
			host, port = h, p
		}
		add("tcp", net.JoinHostPort(host, port), "the fallback share, receiver.listen", true)
		if r.SMB1 && port == "445" {
			add("tcp", net.JoinHostPort(host, "139"), "the fallback share for SMB1 firmware, receiver.smb1", true)
		}
	} else {
		add("tcp", ":445", portLabel(445)+", not enabled", false)
		add("tcp", ":139", portLabel(139)+", not enabled", false)
	}
	if cfg.SNMP.TrapListen != "" {
		add("udp", cfg.SNMP.TrapListen, "SNMP traps, snmp.trap_listen", true)
	} else {
		add("udp", ":162", "SNMP traps, not configured", false)
	}
	if cfg.SNMP.SMTPListen != "" {
		add("tcp", cfg.SNMP.SMTPListen, "job-log e-mail, snmp.smtp_listen", true)
	}
	add("tcp", cfg.Listen, "web page, listen", true)
	return w
}

// portsCheck: each port is free, or held by scanwarden (its daemon, its
// user, or the smbd that runs scanwarden's own smb.conf).
type portsCheck struct{ *doc }

func (c portsCheck) run(context.Context) {
	cfg := c.cfg
	socks, err := sockets.Listening(c.opt.ProcRoot)
	if err != nil {
		c.add("ports", Skip, "", "cannot read the sockets: %v", err)
		return
	}
	uid, _ := c.serviceIDs()
	dataDir := absDataDir(cfg)
	var cache map[uint64][]proc
	for _, w := range wantedPorts(cfg) {
		id := fmt.Sprintf("port.%d", w.port)
		if w.proto == "udp" {
			id += "/udp"
		}
		var held, elsewhere []socket
		for _, s := range socks {
			if s.Proto == w.proto && s.Port == w.port {
				if w.clashes(s.Addr) {
					held = append(held, s)
				} else {
					elsewhere = append(elsewhere, s)
				}
			}
		}
		if len(held) == 0 {
			if len(elsewhere) > 0 {
				c.add(id, OK, "", "%s %d (%s) is free on %s (in use on %s only, which the share does not bind)", w.proto, w.port, w.label,
					w.only, elsewhere[0].Addr)
				continue
			}
			c.add(id, OK, "", "%s %d (%s) is free", w.proto, w.port, w.label)
			continue
		}
		if cache == nil {
			cache = sockets.Owners(c.opt.ProcRoot)
		}
		var ours, theirs []proc
		for _, s := range held {
			for _, p := range cache[s.Inode] {
				if p.UID == uid && uid > 0 || p.Comm == "scanwarden" || isOurSmbd(p, dataDir) || isOurSmbd(p, cfg.Receiver.SmbdDir) {
					ours = append(ours, p)
				} else {
					theirs = append(theirs, p)
				}
			}
		}
		switch {
		case len(theirs) > 0:
			st := Warn
			if w.configured {
				st = Fail
			}
			c.add(id, st, portFix(w, theirs[0]), "%s %d (%s) is held by %s on %s", w.proto, w.port, w.label, theirs[0], held[0].Addr)
		case len(ours) > 0:
			c.add(id, OK, "", "%s %d (%s) is held by scanwarden: %s", w.proto, w.port, w.label, ours[0])
		default:
			c.add(id, Warn, "run doctor as root to see who holds it", "%s %d (%s) is in use on %s by a process this user cannot see",
				w.proto, w.port, w.label, held[0].Addr)
		}
	}
}

func portFix(w portWant, p proc) string {
	switch {
	case (p.Comm == "smbd" || p.Comm == "nmbd") && (strings.Contains(p.Cmdline, " -s ") || strings.Contains(p.Cmdline, "--configfile")):
		return fmt.Sprintf("another smbd (%s) holds it on the share's address: stop it, or give the share another receiver.listen", strings.TrimSpace(p.Cmdline))
	case p.Comm == "smbd" || p.Comm == "nmbd":
		return "Debian's own Samba holds it: systemctl disable --now smbd nmbd (scanwarden runs its own smbd in scanwarden-smbd.service), or bind it to other addresses (interfaces, bind interfaces only)"
	case w.port == 162:
		return fmt.Sprintf("stop %s (snmptrapd?) or give scanwarden another snmp.trap_listen and point the MFPs' traps there", p.Comm)
	}
	return fmt.Sprintf("stop %s, or move scanwarden's listener to a free port in the config", p.Comm)
}

// isOurSmbd: an smbd running a config under scanwarden's data dir.
func isOurSmbd(p proc, dataDir string) bool {
	return p.Comm == "smbd" && strings.Contains(p.Cmdline, dataDir+string(filepath.Separator))
}
