// Package sockets reads the listening TCP and bound UDP sockets of the box
// from /proc/net and the processes holding them from /proc/PID/fd: who has
// a port. Other users' processes are seen only by root (or not at all
// under hidepid): a socket with no owner is one this process cannot see.
package sockets

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Socket is one bound socket read from /proc/net.
type Socket struct {
	Proto string // tcp or udp
	Addr  string
	Port  int
	Inode uint64
}

// Proc is a process holding a socket.
type Proc struct {
	PID     int
	Comm    string
	UID     int
	Cmdline string
}

func (p Proc) String() string { return fmt.Sprintf("%s (pid %d)", p.Comm, p.PID) }

// Listening lists listening TCP and bound UDP sockets (IPv4 and IPv6).
func Listening(procRoot string) ([]Socket, error) {
	var out []Socket
	var firstErr error
	read := 0
	for _, f := range []struct{ name, proto, state string }{
		{"tcp", "tcp", "0A"}, {"tcp6", "tcp", "0A"}, {"udp", "udp", "07"}, {"udp6", "udp", "07"},
	} {
		fh, err := os.Open(filepath.Join(procRoot, "net", f.name))
		if err != nil {
			// a unit's ProcSubset=pid hides /proc/net, not /proc/self/net
			fh, err = os.Open(filepath.Join(procRoot, "self", "net", f.name))
		}
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
			out = append(out, Socket{Proto: f.proto, Addr: HexAddr(host), Port: int(port), Inode: inode})
		}
		fh.Close()
	}
	if read == 0 {
		return nil, firstErr
	}
	return out, nil
}

// HexAddr turns /proc/net's address (little-endian 32-bit words) into text.
func HexAddr(h string) string {
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

// Owners maps socket inodes to the processes holding them. Other
// users' processes are seen only by root.
func Owners(procRoot string) map[uint64][]Proc {
	m := map[uint64][]Proc{}
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
		var p *Proc
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

func readProc(dir string, pid int) *Proc {
	p := &Proc{PID: pid, UID: -1}
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		p.Comm = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil {
		p.Cmdline = strings.ReplaceAll(string(b), "\x00", " ")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "Uid:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					p.UID, _ = strconv.Atoi(f[0])
				}
			}
		}
	}
	return p
}
