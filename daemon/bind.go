package daemon

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// BindError is a listener of serve's (the page, the trap or the mail
// listener) that could not bind at start: serve does not start. Key is the
// config key that names the address; Holder names the process that has the
// port when ss(8) can tell ("" otherwise).
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
		s += " (another process has the port; `ss -ltnup` as root names it)"
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

var ssUser = regexp.MustCompile(`\("([^"]{0,64})",pid=([0-9]{1,10})`)

// portHolder asks ss which processes listen on addr's port (proto "tcp"
// or "udp"): `"name" pid N on ADDR`, "" when ss is missing or cannot tell
// (the process belongs to another user and we are not root).
func portHolder(proto, addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return ""
	}
	flag := "-Hltnp"
	if proto == "udp" {
		flag = "-Hlunp"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ss", flag, "sport", "=", ":"+port).Output()
	if err != nil {
		return ""
	}
	return parseSS(string(out))
}

// parseSS reads `ss -Hl?np` lines: the first process named, with the
// local address it listens on.
func parseSS(out string) string {
	var found []string
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		m := ssUser.FindStringSubmatch(f[len(f)-1])
		if m == nil {
			continue
		}
		local := f[3]
		if !printable(local) {
			local = strconv.QuoteToASCII(local)
		}
		found = append(found, strconv.QuoteToASCII(m[1])+" pid "+m[2]+" on "+local)
	}
	return strings.Join(found, ", ")
}
