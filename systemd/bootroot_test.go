package systemd

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"
)

// rootCommands: issue 28's reproductions in the booted box, the daemon's
// user (scanwarden, owner of the data dir as installed) against the
// commands the README tells the admin to run as root. The daemon
// catalogues a cut-off scan as incomplete; its user makes held/<today> a
// link to a root-only folder; root's `receiver force` is refused naming the
// link, root's folder stays empty and the scan stays in the inbox (the
// same force works once the link is gone). Then, the daemon stopped, its
// user puts a FIFO where its database is: root's `doctor` ends within
// seconds naming it.
func (c *container) rootCommands() {
	t := c.t
	t.Helper()
	c.run(`printf '%%PDF-1.4\n1 0 obj\n<< /Body (cut off' >/var/tmp/cut.pdf`)
	c.putFile("/var/tmp/cut.pdf", "cut.pdf", 10*time.Second)
	var id int64
	c.poll("cut.pdf catalogued as incomplete", 30*time.Second, func() (bool, string) {
		out, _ := c.sh(receiverList)
		var rows []struct {
			ID    int64  `json:"id"`
			File  string `json:"file"`
			State string `json:"state"`
		}
		json.Unmarshal([]byte(out), &rows)
		for _, r := range rows {
			if r.File == "cut.pdf" && r.State == "incomplete" {
				id = r.ID
				return true, out
			}
		}
		return false, out
	})
	today := strings.TrimSpace(c.run("date -u +%F"))
	held := ReceiverDir + "/held/" + today
	c.run("mkdir -m 700 /root/rootonly")
	c.run(asDaemonUser + "sh -c 'mv " + held + " " + held + ".keep 2>/dev/null; ln -s /root/rootonly " + held + "'")
	force := Binary + " receiver force " + strconv.FormatInt(id, 10)
	out, code := c.sh(force)
	if code == 0 || !strings.Contains(out, "symbolic link") {
		t.Errorf("receiver force with held/%s a link to a root-only folder: exit %d, want refused naming the link:\n%s", today, code, out)
	}
	if ents, _ := os.ReadDir(c.path("/root/rootonly")); len(ents) > 0 {
		t.Errorf("receiver force moved the daemon's file into root's folder: /root/rootonly/%s", ents[0].Name())
	}
	c.run(asDaemonUser + "sh -c 'rm " + held + "; mv " + held + ".keep " + held + " 2>/dev/null; true'")
	c.run("rmdir /root/rootonly") // the attacks after this look for root-owned side effects in /root
	if out, code := c.sh(force); code != 0 {
		t.Errorf("receiver force once the link is gone: exit %d\n%s", code, out)
	}
	t.Logf("root commands: receiver force refused with held/%s a link (%s)", today, firstLine(out))

	c.run("systemctl stop " + Service)
	db := StateDir + "/scanwarden.db"
	c.run(asDaemonUser + "sh -c 'mv " + db + " " + db + ".keep && mkfifo " + db + "'")
	start := time.Now()
	out, code = c.sh("timeout 60 " + Binary + " doctor --json")
	took := time.Since(start)
	switch {
	case code == 124 || took > 30*time.Second:
		t.Errorf("doctor with a FIFO at the database: blocked (%v, exit %d)", took.Round(time.Millisecond), code)
	case !strings.Contains(out, "FIFO"):
		t.Errorf("doctor with a FIFO at the database does not name it (%v):\n%s", took.Round(time.Millisecond), out)
	}
	c.run(asDaemonUser + "sh -c 'rm " + db + " && mv " + db + ".keep " + db + "'")
	c.run("systemctl start " + Service)
	c.waitActive(30*time.Second, Service)
	t.Logf("root commands: doctor with a FIFO at the database ended in %v naming it", took.Round(time.Millisecond))
}

// putFile stores src (in the box) on the share as name, as put does.
func (c *container) putFile(src, name string, limit time.Duration) {
	c.t.Helper()
	line := "smbclient //127.0.0.1/scans -p 44599 -U mfp%" + bootMFPPassword + " --use-kerberos=disabled -c 'cd _unsorted; put " + src + " " + name + "'"
	c.poll("put "+name+" on the share", limit, func() (bool, string) {
		out, code := c.sh(line)
		return code == 0 && !strings.Contains(out, "NT_STATUS"), out
	})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
