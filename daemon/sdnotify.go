package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// notifier speaks systemd's notify protocol (sd_notify(3)) on
// $NOTIFY_SOCKET: READY=1, STOPPING=1, WATCHDOG=1, STATUS=…. Without the
// variable every call does nothing.
type sdNotifier struct {
	addr *net.UnixAddr
}

func newSDNotifier(getenv func(string) string) *sdNotifier {
	path := getenv("NOTIFY_SOCKET")
	if path == "" {
		return &sdNotifier{}
	}
	if path[0] == '@' { // abstract socket
		path = "\x00" + path[1:]
	}
	return &sdNotifier{addr: &net.UnixAddr{Name: path, Net: "unixgram"}}
}

// Enabled reports whether systemd listens.
func (n *sdNotifier) Enabled() bool { return n.addr != nil }

// Send writes one datagram of state lines.
func (n *sdNotifier) Send(state ...string) error {
	if n.addr == nil {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, err = conn.Write([]byte(strings.Join(state, "\n")))
	return err
}

// watchdogInterval is half of $WATCHDOG_USEC when the watchdog is meant for
// this process ($WATCHDOG_PID unset or ours), else 0.
func watchdogInterval(getenv func(string) string) (time.Duration, error) {
	s := getenv("WATCHDOG_USEC")
	if s == "" {
		return 0, nil
	}
	if pid := getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0, nil
	}
	us, err := strconv.ParseUint(s, 10, 63)
	if err != nil || us == 0 {
		return 0, errors.New("WATCHDOG_USEC: not a positive number")
	}
	return time.Duration(us) * time.Microsecond / 2, nil
}

// watchdog pets systemd's watchdog (WATCHDOG_USEC) on its own goroutine,
// each time after the store answered a ping within the interval: a daemon
// whose store hangs or is gone is restarted by systemd.
type watchdog struct {
	env
	sd    *sdNotifier
	every time.Duration // 0: systemd asks for no watchdog
}

// newWatchdog reads the interval systemd asks for; one that cannot be read
// is logged and means none.
func newWatchdog(e env, sd *sdNotifier, getenv func(string) string) watchdog {
	every, err := watchdogInterval(getenv)
	if err != nil {
		e.log.Warn("systemd watchdog", "err", err)
	}
	return watchdog{env: e, sd: sd, every: every}
}

// run pets the watchdog until ctx ends.
func (w watchdog) run(ctx context.Context) {
	if w.every <= 0 {
		return
	}
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, w.every)
			err := w.st.Ping(pctx)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					w.log.Error("systemd watchdog not petted: the store does not answer", "err", err)
				}
				continue
			}
			w.sd.Send("WATCHDOG=1", "STATUS="+w.faults.status())
		}
	}
}
