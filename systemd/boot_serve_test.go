package systemd

import (
	"fmt"
	"strings"
	"time"
)

// oneServe: in the booted box, a second serve on the installed data dir —
// as the daemon's user, as an admin might start it by hand — exits at once
// (2) naming the running daemon's pid and address; one as root is refused
// without writing into the daemon's lock file; the running daemon answers
// on (root's commands on the data dir are rootCommands').
func (c *container) oneServe(daemonPID int) {
	c.t.Helper()
	start := time.Now()
	out, code := c.sh("timeout 20 runuser -u " + User + " -- env SCANWARDEN_STATE_DIR=/var/lib/scanwarden " + Binary +
		" serve --config /etc/scanwarden/scanwarden.toml")
	want := fmt.Sprintf("by another scanwarden serve (pid %d): its page listens on 127.0.0.1:8080", daemonPID)
	if code != 2 || !strings.Contains(out, want) {
		c.t.Errorf("a second serve as %s: exit %d, want 2 naming %q:\n%s", User, code, want, out)
	}
	took := time.Since(start)
	lock := c.run("stat -c '%U %a' /var/lib/scanwarden/serve.lock; cat /var/lib/scanwarden/serve.lock")
	out, code = c.sh("timeout 20 " + Binary + " serve --config /etc/scanwarden/scanwarden.toml")
	if code != 2 || !strings.Contains(out, "belongs to uid") {
		c.t.Errorf("serve as root on the daemon's data dir: exit %d, want 2 (the lock file is the daemon user's):\n%s", code, out)
	}
	if again := c.run("stat -c '%U %a' /var/lib/scanwarden/serve.lock; cat /var/lib/scanwarden/serve.lock"); again != lock {
		c.t.Errorf("root's serve changed the lock file: %q → %q", lock, again)
	}
	if got := c.mainPID(Service); got != daemonPID {
		c.t.Errorf("the running daemon changed: pid %d → %d", daemonPID, got)
	}
	if h := c.run("curl -sSkL --max-time 5 http://127.0.0.1:8080/healthz"); !strings.HasPrefix(h, "ok") {
		c.t.Errorf("the running daemon's /healthz after the second serve: %q", h)
	}
	c.t.Logf("a second serve refused in %v; the lock file: %s", took.Round(time.Millisecond), strings.ReplaceAll(lock, "\n", " | "))
}
