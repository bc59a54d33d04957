package systemd

import (
	"bytes"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// daemonCLI runs a scanwarden command in the booted box as the daemon's
// user with its unit's environment (the data dir, the key as a credential).
const daemonCLI = "systemd-run --quiet --wait --pipe -p User=" + User + " -p LoadCredential=secret.key:" + KeyFile +
	" -p Environment=SCANWARDEN_STATE_DIR=" + StateDir + " " + Binary + " "

// appliedFile is root's copy of the list it applied, which the daemon reads.
var appliedFile = samba.AppliedFile(SmbdDir)

// allowlistAfterAttacks: the attacks left the daemon's allowlist a symlink
// to /etc/shadow, root's list unchanged. The admin registers an MFP at
// 127.0.0.1: on its next sync (every 30 s) the daemon writes its new list
// over the symlink — a write systemd 252 may miss (it re-adds its watches
// late after a symlink sat at the path). The daemon follows its list to
// root and writes it again until root has it (before, this step wrote the
// list up to 3 times itself): root's list is the daemon's within 100 s,
// and root's reloads since refused nothing.
func (c *container) allowlistAfterAttacks() {
	t := c.t
	t.Helper()
	good, err := os.ReadFile(c.path("/var/tmp/attack-good"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(c.path(appliedFile)); !bytes.Equal(got, good) {
		t.Errorf("after the attacks root's list (%s) is not the daemon's last good one:\n%s", appliedFile, got)
	}
	start := time.Now()
	cursor := c.cursor()
	c.run(daemonCLI + "device add lagmfp --address 127.0.0.1")
	want := string(samba.FormatAllow([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}))
	c.poll("root to apply the daemon's list with the MFP", 100*time.Second, func() (bool, string) {
		got, _ := os.ReadFile(c.path(appliedFile))
		return string(got) == want, "root's list: " + string(got) + "\nthe daemon's file: " + c.run("ls -l "+AllowFile+"; cat "+AllowFile+" || true")
	})
	if fi, err := os.Lstat(c.path(AllowFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the daemon's allowlist after its write: %v %v", fi, err)
	}
	var smbd string
	c.poll("the journal of the reload that took it", 20*time.Second, func() (bool, string) {
		smbd = c.journalAfter(cursor, SMBService)
		return strings.Contains(smbd, "Reloaded "), smbd
	})
	if strings.Contains(smbd, "refused") {
		t.Errorf("root refused a list since the MFP was registered:\n%s", smbd)
	}
	if conf, _ := os.ReadFile(c.path(SMBConf)); !strings.Contains(string(conf), "127.0.0.1/32") {
		t.Errorf("smb.conf does not carry the daemon's list:\n%s", conf)
	}
	daemon := c.journalAfter(cursor, Service)
	t.Logf("after the attacks: root applied the daemon's new list %v after the MFP was registered; the daemon wrote it again %d times",
		time.Since(start).Round(time.Millisecond), strings.Count(daemon, "written again"))
}

// allowlistLag: root never applies the daemon's list — its path unit
// masked and stopped, as when systemd lost the watch. The MFP removed, the
// daemon's list is the box's networks again; it writes it on its next
// sync, twice more after 5 s and 10 s, and 20 s later raises the fault
// receiver.allow.applied: its log names root's list and the daemon's, what
// smbd refuses, and the fix; /healthz counts one fault more; `scanwarden
// doctor` fails receiver.allow.applied naming what smbd refuses, root's
// list and the fix, and passes once root has the list. The path unit
// back (unmask, start), the daemon's next write (a minute after the fault,
// then at 2, 4, … minutes: a step added before the unmask must keep it
// within the first) is taken: the fault clears, root's list is the daemon's, and the
// share serves.
func (c *container) allowlistLag() {
	t := c.t
	t.Helper()
	good, err := os.ReadFile(c.path("/var/tmp/attack-good"))
	if err != nil {
		t.Fatal(err)
	}
	mfp, _ := os.ReadFile(c.path(appliedFile))
	faults := func() int {
		h := c.run("curl -sS --max-time 5 http://127.0.0.1:8080/healthz")
		m := regexp.MustCompile(`^ok, (\d+) fault`).FindStringSubmatch(h)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	before := faults()
	c.run("systemctl mask --runtime --now scanwarden-smbd-reload.path")
	cursor := c.cursor()
	c.run(daemonCLI + "device remove lagmfp")
	var daemon string
	took := c.poll("the daemon's fault of a list root never applied", 100*time.Second, func() (bool, string) {
		daemon = c.journalAfter(cursor, Service)
		return strings.Contains(daemon, "fallback share allowlist not applied by root"), daemon
	})
	line := grepLines(daemon, "fallback share allowlist not applied by root")
	refused := strings.Join(allowEntries(string(good)), " ")
	for _, want := range []string{
		"after 3 writes",
		"smbd refuses " + refused + ", which the daemon admits",
		"The daemon's list (" + AllowFile + "): " + refused,
		"root's (" + appliedFile + "): 127.0.0.1/32",
		"systemctl status scanwarden-smbd-reload.path",
		"systemctl restart scanwarden-smbd-reload.path",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the daemon's fault lacks %q:\n%s", want, line)
		}
	}
	if n := strings.Count(daemon, "written again"); n != 2 {
		t.Errorf("the daemon wrote its list again %d times before the fault, want 2:\n%s", n, daemon)
	}
	if n := faults(); n != before+1 {
		t.Errorf("/healthz counts %d faults with root lagging, %d before", n, before)
	}
	if got, _ := os.ReadFile(c.path(appliedFile)); !bytes.Equal(got, mfp) {
		t.Errorf("root's list changed with its path unit masked:\n%s", got)
	}
	t.Logf("root lagging: the fault %v after the MFP was removed: %s", took.Round(time.Millisecond), line)
	// doctor, run by the admin, compares the two lists too
	st, detail, fix := c.doctor("receiver.allow.applied")
	for _, want := range []string{"smbd refuses " + refused + ", which the daemon admits", "root's (" + appliedFile + "): 127.0.0.1/32"} {
		if st != "fail" || !strings.Contains(detail, want) {
			t.Errorf("doctor with root lagging: receiver.allow.applied %s: %s; want fail naming %q", st, detail, want)
		}
	}
	if !strings.Contains(fix, "systemctl restart scanwarden-smbd-reload.path") || !strings.Contains(fix, "journalctl -u scanwarden-smbd.service") {
		t.Errorf("doctor with root lagging: receiver.allow.applied fix %q lacks the path unit's restart and smbd's journal", fix)
	}

	// the fix the fault names: the path unit back; the daemon's next
	// write is taken
	c.run("systemctl unmask --runtime scanwarden-smbd-reload.path && systemctl start scanwarden-smbd-reload.path")
	fixed := time.Now()
	cursor = c.cursor()
	c.poll("the fault to clear once the path unit is back", 100*time.Second, func() (bool, string) {
		daemon = c.journalAfter(cursor, Service)
		return strings.Contains(daemon, "root applied the fallback share's allowlist"), daemon
	})
	if got, _ := os.ReadFile(c.path(appliedFile)); !bytes.Equal(got, good) {
		t.Errorf("root's list once the path unit is back:\n%s\nwant the daemon's:\n%s", got, good)
	}
	c.poll("/healthz to count the faults of before", 10*time.Second, func() (bool, string) {
		n := faults()
		return n == before, strings.Repeat("fault ", n)
	})
	if st, detail, _ := c.doctor("receiver.allow.applied"); st != "ok" {
		t.Errorf("doctor once root applied the list: receiver.allow.applied %s: %s", st, detail)
	}
	c.put("after-lag.pdf", 10*time.Second)
	t.Logf("path unit back: root applied the daemon's list %v later, the fault cleared", time.Since(fixed).Round(time.Millisecond))
}

// allowEntries are the addresses and networks of an allowlist file's text.
func allowEntries(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
