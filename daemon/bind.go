package daemon

import (
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden/internal/sockets"
)

// BindError is a listener of serve's (the page, the trap or the mail
// listener) that could not bind at start: serve does not start. Key is the
// config key that names the address; Holder names the process that has the
// port when /proc tells (as doctor reads it; "" otherwise).
type BindError struct {
	Key, Addr string
	Err       error
	Holder    string
}

func (e *BindError) Error() string {
	s := e.Key + " = " + e.Addr + ": " + e.Err.Error()
	if e.Holder != "" {
		s += " (held by " + e.Holder + ")"
	} else if errors.Is(e.Err, unix.EADDRINUSE) {
		s += " (its holder is not visible to this user; `sudo scanwarden doctor` names it)"
	}
	return s
}

func (e *BindError) Unwrap() error { return e.Err }

// bindError is the *BindError for key's addr, the holder looked up when
// the address is in use.
func bindError(key, proto, addr string, err error) *BindError {
	be := &BindError{Key: key, Addr: addr, Err: err}
	if errors.Is(err, unix.EADDRINUSE) {
		be.Holder = portHolder(proto, addr)
	}
	return be
}

// portHolder names the processes that have addr's port (proto "tcp" or
// "udp") on the address it names or on every address, as doctor finds
// them (/proc/net and /proc/PID/fd): `"name" pid N on ADDR`, "" when they
// cannot be seen (another user's process, and serve is not root).
func portHolder(proto, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return ""
	}
	want, _ := netip.ParseAddr(host)
	socks, err := sockets.Listening("/proc")
	if err != nil {
		return ""
	}
	var owners map[uint64][]sockets.Proc
	var found []string
	for _, s := range socks {
		if s.Proto != proto || s.Port != int(n) {
			continue
		}
		if a, err := netip.ParseAddr(s.Addr); want.IsValid() && !want.IsUnspecified() && err == nil && !a.IsUnspecified() && a.Unmap() != want.Unmap() {
			continue // bound to another address: not what refused ours
		}
		if owners == nil {
			owners = sockets.Owners("/proc")
		}
		for _, p := range owners[s.Inode] {
			found = append(found, strconv.QuoteToASCII(p.Comm)+" pid "+strconv.Itoa(p.PID)+" on "+net.JoinHostPort(s.Addr, port))
		}
	}
	return strings.Join(slices.Compact(found), ", ")
}
