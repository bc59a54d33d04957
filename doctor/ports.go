package doctor

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden/daemon"
)

// socket is one bound socket read from /proc/net.
type socket struct {
	proto string // tcp or udp
	addr  string
	port  int
	inode uint64
}

// proc is a process holding a socket.
type proc struct {
	pid     int
	comm    string
	uid     int
	cmdline string
}

func (p proc) String() string { return fmt.Sprintf("%s (pid %d)", p.comm, p.pid) }

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

func (d *doc) wantedPorts(cfg daemon.Config) []portWant {
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

// ports: each port is free, or held by scanwarden (its daemon, its user,
// or the smbd that runs scanwarden's own smb.conf).
func (d *doc) ports(cfg daemon.Config) {
	socks, err := readSockets(d.opt.ProcRoot)
	if err != nil {
		d.add("ports", Skip, "", "cannot read the sockets: %v", err)
		return
	}
	uid, _ := d.serviceIDs()
	dataDir := absDataDir(cfg)
	var cache map[uint64][]proc
	for _, w := range d.wantedPorts(cfg) {
		id := fmt.Sprintf("port.%d", w.port)
		if w.proto == "udp" {
			id += "/udp"
		}
		var held, elsewhere []socket
		for _, s := range socks {
			if s.proto == w.proto && s.port == w.port {
				if w.clashes(s.addr) {
					held = append(held, s)
				} else {
					elsewhere = append(elsewhere, s)
				}
			}
		}
		if len(held) == 0 {
			if len(elsewhere) > 0 {
				d.add(id, OK, "", "%s %d (%s) is free on %s (in use on %s only, which the share does not bind)", w.proto, w.port, w.label,
					w.only, elsewhere[0].addr)
				continue
			}
			d.add(id, OK, "", "%s %d (%s) is free", w.proto, w.port, w.label)
			continue
		}
		if cache == nil {
			cache = socketOwners(d.opt.ProcRoot)
		}
		var ours, theirs []proc
		for _, s := range held {
			for _, p := range cache[s.inode] {
				if p.uid == uid && uid > 0 || p.comm == "scanwarden" || isOurSmbd(p, dataDir) || isOurSmbd(p, cfg.Receiver.SmbdDir) {
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
			d.add(id, st, portFix(w, theirs[0]), "%s %d (%s) is held by %s on %s", w.proto, w.port, w.label, theirs[0], held[0].addr)
		case len(ours) > 0:
			d.add(id, OK, "", "%s %d (%s) is held by scanwarden: %s", w.proto, w.port, w.label, ours[0])
		default:
			d.add(id, Warn, "run doctor as root to see who holds it", "%s %d (%s) is in use on %s by a process this user cannot see",
				w.proto, w.port, w.label, held[0].addr)
		}
	}
}

func portFix(w portWant, p proc) string {
	switch {
	case (p.comm == "smbd" || p.comm == "nmbd") && (strings.Contains(p.cmdline, " -s ") || strings.Contains(p.cmdline, "--configfile")):
		return fmt.Sprintf("another smbd (%s) holds it on the share's address: stop it, or give the share another receiver.listen", strings.TrimSpace(p.cmdline))
	case p.comm == "smbd" || p.comm == "nmbd":
		return "Debian's own Samba holds it: systemctl disable --now smbd nmbd (scanwarden runs its own smbd in scanwarden-smbd.service), or bind it to other addresses (interfaces, bind interfaces only)"
	case w.port == 162:
		return fmt.Sprintf("stop %s (snmptrapd?) or give scanwarden another snmp.trap_listen and point the MFPs' traps there", p.comm)
	}
	return fmt.Sprintf("stop %s, or move scanwarden's listener to a free port in the config", p.comm)
}

// isOurSmbd: an smbd running a config under scanwarden's data dir.
func isOurSmbd(p proc, dataDir string) bool {
	return p.comm == "smbd" && strings.Contains(p.cmdline, dataDir+string(filepath.Separator))
}

// readSockets lists listening TCP and bound UDP sockets (IPv4 and IPv6).
func readSockets(procRoot string) ([]socket, error) {
	var out []socket
	var firstErr error
	read := 0
	for _, f := range []struct{ name, proto, state string }{
		{"tcp", "tcp", "0A"}, {"tcp6", "tcp", "0A"}, {"udp", "udp", "07"}, {"udp6", "udp", "07"},
	} {
		fh, err := os.Open(filepath.Join(procRoot, "net", f.name))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		read++
		sc := bufio.NewScanner(fh)
		sc.Scan() // header
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 || fl[3] != f.state {
				continue
			}
			host, portHex, ok := strings.Cut(fl[1], ":")
			if !ok {
				continue
			}
			port, err1 := strconv.ParseUint(portHex, 16, 16)
			inode, err2 := strconv.ParseUint(fl[9], 10, 64)
			if err1 != nil || err2 != nil {
				continue
			}
			out = append(out, socket{proto: f.proto, addr: hexAddr(host), port: int(port), inode: inode})
		}
		fh.Close()
	}
	if read == 0 {
		return nil, firstErr
	}
	return out, nil
}

// hexAddr turns /proc/net's address (little-endian 32-bit words) into text.
func hexAddr(h string) string {
	b := make([]byte, len(h)/2)
	for i := range b {
		v, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
		if err != nil {
			return h
		}
		b[i] = byte(v)
	}
	for i := 0; i+4 <= len(b); i += 4 { // each 32-bit word is in host (little-endian) order
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	return net.IP(b).String()
}

// socketOwners maps socket inodes to the processes holding them. Other
// users' processes are seen only by root.
func socketOwners(procRoot string) map[uint64][]proc {
	m := map[uint64][]proc{}
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return m
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(procRoot, e.Name())
		fds, err := os.ReadDir(filepath.Join(dir, "fd"))
		if err != nil {
			continue
		}
		var p *proc
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			inode, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"), 10, 64)
			if err != nil {
				continue
			}
			if p == nil {
				p = readProc(dir, pid)
			}
			m[inode] = append(m[inode], *p)
		}
	}
	return m
}

func readProc(dir string, pid int) *proc {
	p := &proc{pid: pid, uid: -1}
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		p.comm = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		p.cmdline = strings.ReplaceAll(string(b), "\x00", " ")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					p.uid, _ = strconv.Atoi(f[0])
				}
			}
		}
	}
	return p
}
