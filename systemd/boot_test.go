package systemd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestMain lets TestDebBoot run this test binary inside its booted box as
// an MFP that holds a file open half-written (smbclient cannot): with
// SCANWARDEN_BOOT_WRITER set, it is that writer and nothing else. Else it
// runs the tests with a folder for the packages they build (buildPackage).
func TestMain(m *testing.M) {
	if os.Getenv("SCANWARDEN_BOOT_WRITER") != "" {
		if err := slowWriter(os.Getenv("SCANWARDEN_BOOT_WRITER"), os.Getenv("SCANWARDEN_BOOT_PAUSE")); err != nil {
			fmt.Println("WRITER FAILED:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "scanwarden-packages-")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	packages.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// slowWriter stores /var/tmp/slow-body on the share as the MFP account:
// the first half, "HALF", the pause with the file open, the rest, "CLOSED".
func slowWriter(name, pause string) error {
	wait, err := time.ParseDuration(pause)
	if err != nil {
		return fmt.Errorf("SCANWARDEN_BOOT_PAUSE: %w", err)
	}
	body, err := os.ReadFile("/var/tmp/slow-body")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait+30*time.Second)
	defer cancel()
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "mfp", Password: bootMFPPassword}}
	s, err := d.Dial(ctx, net.JoinHostPort("127.0.0.1", "44599"))
	if err != nil {
		return fmt.Errorf("logon: %w", err)
	}
	defer s.Logoff()
	share, err := s.Mount(`\\127.0.0.1\scans`)
	if err != nil {
		return fmt.Errorf("tree connect: %w", err)
	}
	defer share.Umount()
	f, err := share.Create(`_unsorted\` + name)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	if _, err := f.Write(body[:len(body)/2]); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	fmt.Println("HALF")
	time.Sleep(wait)
	if _, err := f.Write(body[len(body)/2:]); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	fmt.Println("CLOSED")
	return nil
}

// bootMFPPassword is the MFP account's password in the booted box.
const bootMFPPassword = "Mfp.Boot-25"

// TestDebBoot boots the Debian package under a real systemd: the root of
// scripts/debroot (systemd as init, dbus), the package installed with
// dpkg -i, the share turned on as an admin would, Debian's own smbd and nmbd
// disabled, then systemd-nspawn --boot with a private network (loopback
// only). In the booted box: both units come up by themselves, the daemon as
// user scanwarden and smbd as root; the web page answers; doctor's share
// check passes, and fails naming samba-vfs-modules once Samba's full_audit
// module is taken away (doctorShare); an MFP's scan
// (smbclient on the share) is catalogued, one held open half-written is not
// taken until it is closed, then whole; the daemon killed with SIGKILL is
// restarted by systemd while smbd keeps running, and the catalogue and the
// share survive; a file server in the box (a second smbd, root, a local
// Samba user) registered as a destination by the daemon's user, and the
// daemon killed with SIGKILL five times during its deliveries there: every
// scan delivered exactly once with its bytes, none refused as "already
// failed" (killDuringDeliveries); what the daemon's user can write (the
// allowlist, the old smb.conf place, symlinks) is refused by root's reload step and no
// `root preexec` it plants ever runs; the daemon's own list, written over
// the attack's symlink, taken by root (allowlistAfterAttacks); a list root
// never applies (its path unit masked) written again, then the daemon's
// fault receiver.allow.applied, cleared once the path unit is back
// (allowlistLag); `secrets rotate` run by root leaves a
// stored destination's password usable by the restarted daemon's user;
// smbd's journal holds no testparm dump;
// systemd-analyze verify passes on the installed units; poweroff is clean.
func TestDebBoot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Debian boot test builds a package and boots a container")
	}
	if os.Geteuid() != 0 {
		testlab.Missing(t, "the Debian boot test needs root (systemd-nspawn, chroot, cgroups)")
	}
	for _, tool := range []string{"systemd-nspawn", "nsenter", "unshare", "chroot", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			testlab.Missing(t, tool+" not installed: Debian boot test skipped (apt-get install systemd-container; testlab/deps does)")
		}
	}
	cg, err := hostCgroups()
	if err != nil {
		testlab.Missing(t, "Debian boot test skipped: "+err.Error())
	}
	tarball := debRoot(t)
	total := time.Now()

	dir := t.TempDir()
	start := time.Now()
	deb := buildPackage(t, "0.0.1~test2") // TestDebInstall's N+1: built once for both
	t.Logf("package ready in %v (built once per test process)", time.Since(start).Round(time.Millisecond))

	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if out, err := exec.Command("tar", "-C", root, "-xf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tarball, err, out)
	}
	if _, err := os.Stat(filepath.Join(root, "sbin/init")); err != nil {
		t.Fatalf("%s cannot boot (no /sbin/init: scripts/debroot must include systemd-sysv): %v", tarball, err)
	}
	b, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	r := debianRoot{t: t, dir: root}
	writeFile(t, filepath.Join(root, "var/tmp", filepath.Base(deb)), b, 0o644)
	r.run("dpkg", "-i", "/var/tmp/"+filepath.Base(deb))
	os.Remove(filepath.Join(root, "var/tmp", filepath.Base(deb)))
	_, gid := r.user(User)

	// the admin turns the share on (loopback: the container has only lo)
	conf := r.read(ConfigFile)
	conf = bytes.Replace(conf, []byte("enabled = false"), []byte("enabled = true"), 1)
	conf = bytes.Replace(conf, []byte(`listen = ""`), []byte(`listen = "127.0.0.1:44599"`), 1)
	conf = bytes.Replace(conf, []byte(`# password_file = `), []byte(`password_file = `), 1)
	conf = bytes.Replace(conf, []byte("\nexternal_smbd = true"), []byte("\nexternal_smbd = true\nquiet = \"1s\""), 1)
	conf = bytes.Replace(conf, []byte(`listen = "0.0.0.0:8080"`), []byte(`listen = "127.0.0.1:8080"`), 1)
	r.write(ConfigFile, conf, 0o644, 0, 0)
	r.write("/etc/scanwarden/receiver.password", []byte(bootMFPPassword+"\n"), 0o640, 0, gid)
	// as the README says: Debian's own Samba off (its nmbd would also hold
	// the boot in "starting" on a box with loopback only)
	r.run("systemctl", "disable", "--quiet", "smbd.service", "nmbd.service")
	t.Logf("root unpacked, package installed and configured in %v", time.Since(start).Round(time.Millisecond))

	c := boot(t, root, cg)
	c.waitRunning(90 * time.Second)
	c.waitActive(30*time.Second, Service, SMBService)

	// who runs what
	daemonPID, smbdPID := c.mainPID(Service), c.mainPID(SMBService)
	uid := c.run("id -u " + User)
	if ids := c.uids(daemonPID); ids != strings.Repeat(uid+" ", 4) {
		t.Errorf("%s (pid %d) runs as uids %q, want %s (user %s) for all four", Service, daemonPID, ids, uid, User)
	}
	if ids := c.uids(smbdPID); ids != "0 0 0 0 " {
		t.Errorf("%s (pid %d) runs as uids %q, want root", SMBService, smbdPID, ids)
	}
	if comm := c.run(fmt.Sprintf("cat /proc/%d/comm", smbdPID)); comm != "smbd" {
		t.Errorf("%s's main process is %q, want smbd", SMBService, comm)
	}
	t.Logf("%s: pid %d uid %s; %s: smbd pid %d uid 0", Service, daemonPID, uid, SMBService, smbdPID)

	// the web page answers on the box
	c.poll("the web page's /healthz", 20*time.Second, func() (bool, string) {
		out, _ := c.sh("curl -sSkL --max-time 5 http://127.0.0.1:8080/healthz")
		return strings.HasPrefix(out, "ok"), out
	})

	// the README's first login: root prints the daemon's one-time setup
	// link, and the page behind it asks for the admin password; a wrong
	// token is turned away
	link := regexp.MustCompile(`http://127\.0\.0\.1:8080/setup\?token=[^\s]+`).FindString(c.run(Binary + " admin setup-link"))
	if link == "" {
		t.Errorf("scanwarden admin setup-link names no http://127.0.0.1:8080/setup?token=… link")
	} else {
		for _, l := range []struct{ url, code string }{{link, "200"}, {link + "x", "404"}} {
			if got := c.run("curl -sS -o /dev/null -w '%{http_code}' --max-time 5 '" + l.url + "'"); got != l.code {
				t.Errorf("GET %s: HTTP %s, want %s", l.url, got, l.code)
			}
		}
	}

	c.oneServe(daemonPID)
	c.doctorShare()

	// a file server the daemon delivers to, registered as the admin does
	// (the daemon lays out its folder on the share at the restart below)
	archiveFolder := c.archiveServer()

	// an MFP stores a scan; the unprivileged daemon catalogues it
	c.run(`printf '%%PDF-1.4\n1 0 obj\n<< /Body (booted) >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%%%EOF\n' >/var/tmp/scan.pdf`)
	c.put("scan1.pdf", 20*time.Second)
	c.catalogued("scan1.pdf", 20*time.Second)

	// a crash of the daemon: systemd restarts it, smbd is not touched
	start = time.Now()
	c.run("systemctl kill -s KILL " + Service)
	c.poll(Service+" restarted after SIGKILL", 45*time.Second, func() (bool, string) {
		out, _ := c.sh("systemctl show -p MainPID -p ActiveState -p NRestarts " + Service)
		pid := showValue(out, "MainPID")
		return pid != "0" && pid != strconv.Itoa(daemonPID) && showValue(out, "ActiveState") == "active", out
	})
	t.Logf("%s restarted %v after SIGKILL (RestartSec=5s): pid %d → %d, NRestarts %s", Service,
		time.Since(start).Round(time.Millisecond), daemonPID, c.mainPID(Service), showValue(c.run("systemctl show -p NRestarts "+Service), "NRestarts"))
	if got := c.mainPID(SMBService); got != smbdPID {
		t.Errorf("the daemon's restart touched smbd: MainPID %d → %d", smbdPID, got)
	}
	c.catalogued("scan1.pdf", 10*time.Second)
	c.put("scan2.pdf", 10*time.Second)
	c.catalogued("scan2.pdf", 20*time.Second)

	c.slowWriter()
	c.rootCommands()
	c.attacks(smbdPID)
	c.allowlistLag()
	c.killDuringDeliveries(archiveFolder, smbdPID)
	c.rotate(uid)

	// root's step writes to the journal, testparm's dump does not
	journal := c.run("journalctl --no-pager -o cat -u " + SMBService + " -u scanwarden-smbd-reload.service")
	if !strings.Contains(journal, SMBConf+" written") {
		t.Errorf("journal of %s lacks the root step's %q (is the journal read at all?):\n%s", SMBService, SMBConf+" written", journal)
	}
	for _, dump := range []string{"Global parameters", "Loaded services file", "Server role:"} {
		if strings.Contains(journal, dump) {
			t.Errorf("journal of %s holds testparm's output (%q):\n%s", SMBService, dump, journal)
		}
	}

	// the installed units, verified by the booted system's own systemd
	units := make([]string, 0, len(Units()))
	for _, u := range Units() {
		units = append(units, filepath.Join(UnitDir, u))
	}
	if out, code := c.sh("systemd-analyze verify --man=no " + strings.Join(units, " ")); code != 0 || out != "" {
		t.Errorf("systemd-analyze verify in the booted box: exit %d\n%s", code, out)
	}

	c.poweroff()
	t.Logf("whole boot test: %v", time.Since(total).Round(time.Millisecond))
}

// rotate: a destination stored by the daemon's user (the box's own share,
// the MFP account) checks out; the admin stops the daemon and runs
// `secrets rotate` as root on the key's source, as its help says; the key
// changes, nothing in the data dir becomes root's, and the restarted daemon's
// user opens the password with the new credential: the check logs on again.
func (c *container) rotate(uid string) {
	t := c.t
	t.Helper()
	n, err := strconv.Atoi(uid)
	if err != nil {
		t.Fatal(err)
	}
	r := debianRoot{t: t, dir: c.root}
	r.write("/var/tmp/d1.pw", []byte(bootMFPPassword+"\n"), 0o600, n, n)
	asDaemon := "systemd-run --quiet --wait --pipe -p User=" + User + " -p LoadCredential=secret.key:" + KeyFile +
		" -p Environment=SCANWARDEN_STATE_DIR=" + StateDir + " " + Binary + " "
	c.run(asDaemon + "destination add d1 //127.0.0.1:44599/scans --user mfp --password-file /var/tmp/d1.pw")
	check := asDaemon + "check --destination d1"
	if out, code := c.sh(check); code != 0 {
		t.Fatalf("check of the stored destination before the rotation: exit %d\n%s", code, out)
	}
	key := r.read(KeyFile)
	c.run("systemctl stop " + Service)
	out := c.run(Binary + " secrets rotate --data-dir " + StateDir + " --key-file " + KeyFile)
	if !strings.Contains(out, "re-encrypted") {
		t.Errorf("secrets rotate: %s", out)
	}
	if bytes.Equal(r.read(KeyFile), key) {
		t.Errorf("secrets rotate left %s as it was", KeyFile)
	}
	r.check(KeyFile, 0o600, 0, 0, false)
	if owned := c.run("find " + StateDir + " -user root"); owned != "" {
		t.Errorf("root's rotate left root-owned files in the daemon's data dir:\n%s", owned)
	}
	c.run("systemctl start " + Service)
	c.waitActive(30*time.Second, Service)
	if out, code := c.sh(check); code != 0 {
		t.Errorf("check of the stored destination after the rotation and restart: exit %d\n%s", code, out)
	}
	t.Logf("rotate: %s; the restarted daemon's user opens the destination's password with the new key", out)
}

// slowWriter: an MFP that pauses 12 s mid-file (the share's quiet window is
// 1 s here) holds its file open; the daemon, unprivileged under systemd's
// sandbox, does not take it while it is open — neither catalogued nor
// "incomplete" — and takes it whole once closed.
func (c *container) slowWriter() {
	t := c.t
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(c.path("/var/tmp/sw-writer"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	body := append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte("0123456789abcdef"), 8<<10)...)
	body = append(body, "\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"...)
	writeFile(t, c.path("/var/tmp/slow-body"), body, 0o644)
	c.run("SCANWARDEN_BOOT_WRITER=slow.pdf SCANWARDEN_BOOT_PAUSE=12s /var/tmp/sw-writer >/var/tmp/writer.out 2>&1 </dev/null &")
	c.poll("the slow writer's first half", 20*time.Second, func() (bool, string) {
		out, _ := c.sh("cat /var/tmp/writer.out")
		if strings.Contains(out, "FAILED") {
			t.Fatalf("the slow writer: %s", out)
		}
		return strings.Contains(out, "HALF"), out
	})
	half := time.Now()
	var looks int
	var lastOpen time.Duration
	for {
		// the catalogue first, then the writer: a scan listed before the
		// writer said CLOSED was taken while it was open (read the other
		// way round, a close between the two reads looks like that)
		scans := c.scans()
		out, _ := c.sh("cat /var/tmp/writer.out")
		if strings.Contains(out, "CLOSED") || strings.Contains(out, "FAILED") {
			break
		}
		if time.Since(half) > 30*time.Second {
			t.Fatalf("the slow writer did not close within 30 s: %s", out)
		}
		if s, ok := scans["slow.pdf"]; ok {
			t.Fatalf("slow.pdf taken %v after its first half, while the MFP still holds it open: %+v", time.Since(half).Round(time.Millisecond), s)
		}
		looks++
		lastOpen = time.Since(half)
		time.Sleep(time.Second)
	}
	if looks < 3 || lastOpen < 8*time.Second {
		t.Fatalf("looked %d times, last %v after the first half: too little to judge (the box is too slow?)", looks, lastOpen)
	}
	closed := time.Now()
	var got scanEntry
	c.poll("slow.pdf catalogued once closed", 20*time.Second, func() (bool, string) {
		s, ok := c.scans()["slow.pdf"]
		got = s
		return ok, fmt.Sprintf("%+v", c.scans())
	})
	if got.Size != int64(len(body)) || got.State == "incomplete" {
		t.Errorf("slow.pdf catalogued as %+v, want %d bytes, complete", got, len(body))
	}
	t.Logf("slow writer: not taken while open (%d looks over %v), taken %v after the close: %d bytes, %s",
		looks, lastOpen.Round(time.Millisecond), time.Since(closed).Round(time.Millisecond), got.Size, got.State)
}

type scanEntry struct {
	File        string `json:"file"`
	Destination string `json:"destination"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	State       string `json:"state"`
}

// scans is the daemon's catalogue, read as its user.
func (c *container) scans() map[string]scanEntry {
	c.t.Helper()
	out := c.run(receiverList)
	var list []scanEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		c.t.Fatalf("receiver list --json: %v\n%s", err, out)
	}
	m := map[string]scanEntry{}
	for _, s := range list {
		m[s.File] = s
	}
	return m
}

// receiverList runs `scanwarden receiver list --json` as the daemon's user
// with its unit's environment (systemd-run: the data dir, the key as a
// credential).
const receiverList = "systemd-run --quiet --wait --pipe -p User=" + User + " -p LoadCredential=secret.key:" + KeyFile +
	" -p Environment=SCANWARDEN_STATE_DIR=" + StateDir + " " + Binary + " receiver list --json"

// attacks: what user scanwarden can write, written as that user inside the
// booted box, reaches root's reload step through the path unit, is refused
// there (the journal says so), and the next SMB logon runs no `root
// preexec`, redirects no passdb, admits no network beyond [receiver] allow
// and the box's own, follows no symlink; smbd keeps serving the
// share with the smb.conf it had. Then the control: the same `root preexec`
// in root's own smb.conf does run at the next logon — the probe sees it.
func (c *container) attacks(smbdPID int) {
	t := c.t
	t.Helper()
	allow := AllowFile
	good, err := os.ReadFile(c.path(allow))
	if err != nil {
		t.Fatal(err)
	}
	smbConf, err := os.ReadFile(c.path(SMBConf))
	if err != nil {
		t.Fatal(err)
	}
	shadow, err := os.ReadFile(c.path("/etc/shadow"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, c.path("/root/root-file"), []byte("root's own\n"), 0o640)
	const preexec = `	root preexec = /bin/sh -c "id > /var/tmp/pwned; id > ` + SmbdDir + `/pwned"` + "\n"
	const passdb = "\tpassdb backend = smbpasswd:/root/root-file\n"
	payloads := map[string]string{
		"preexec": "[global]\n" + preexec,
		"passdb":  passdb,
		"oldconf": "[global]\n" + preexec + passdb,
		"wide":    "0.0.0.0/0\n::/0\n",
		"good":    string(good),
	}
	for name, text := range payloads {
		writeFile(t, c.path("/var/tmp/attack-"+name), []byte(text), 0o644)
	}
	old := ReceiverDir + "/smbd"
	for i, a := range []struct {
		name, line, refused string
	}{
		{"root preexec appended to the allowlist",
			"cat /var/tmp/attack-good /var/tmp/attack-preexec >" + allow, "[global]"},
		{"passdb redirect appended to the allowlist",
			"cat /var/tmp/attack-good /var/tmp/attack-passdb >" + allow, "passdb backend"},
		{"the whole Internet appended to the allowlist (0.0.0.0/0, ::/0)",
			"cat /var/tmp/attack-good /var/tmp/attack-wide >" + allow, "0.0.0.0/0 is a network that neither"},
		{"smb.conf and a private symlink at the old place, the allowlist a symlink to /etc/shadow",
			"mkdir -p " + old + " && cp /var/tmp/attack-oldconf " + old + "/smb.conf && ln -sfn /root " + old + "/private && " +
				"ln -sfn /etc/shadow " + allow + ".new && mv -T " + allow + ".new " + allow, "symbolic link"},
	} {
		start := time.Now()
		journal := c.reloaded(func() {
			if out, code := c.sh(asDaemonUser + "sh -c '" + a.line + "'"); code != 0 {
				t.Fatalf("attack %q: user %s could not write: %d %s", a.name, User, code, out)
			}
		})
		if !strings.Contains(journal, "refused") || !strings.Contains(journal, a.refused) {
			t.Errorf("attack %q: root's reload step did not refuse it naming %q:\n%s", a.name, a.refused, journal)
		}
		c.put(fmt.Sprintf("attack%d.pdf", i+1), 10*time.Second) // the logon: smbd still serves
		if found := c.pwned(); found != "" {
			t.Errorf("attack %q: a planted root preexec ran: %s", a.name, found)
		}
		if got, _ := os.ReadFile(c.path(SMBConf)); !bytes.Equal(got, smbConf) {
			t.Errorf("attack %q: smb.conf changed:\n%s", a.name, got)
		}
		if got, _ := os.ReadFile(c.path("/etc/shadow")); !bytes.Equal(got, shadow) {
			t.Errorf("attack %q: /etc/shadow changed", a.name)
		}
		if got, _ := os.ReadFile(c.path("/root/root-file")); string(got) != "root's own\n" {
			t.Errorf("attack %q: /root/root-file changed: %q", a.name, got)
		}
		r := debianRoot{t: t, dir: c.root}
		r.check("/root/root-file", 0o640, 0, 0, false)
		ents, _ := os.ReadDir(c.path("/root"))
		for _, e := range ents {
			if e.Name() != "root-file" && !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("attack %q: root-owned side effect /root/%s", a.name, e.Name())
			}
		}
		if got := c.mainPID(SMBService); got != smbdPID {
			t.Errorf("attack %q: smbd restarted (pid %d → %d)", a.name, smbdPID, got)
		}
		t.Logf("attack %q: refused by the reload step, logon served, nothing ran (%v)", a.name, time.Since(start).Round(time.Millisecond))
	}

	// the daemon's own list, written by the daemon over the symlink, is
	// taken again (allowlistAfterAttacks); smb.conf now carries it
	c.allowlistAfterAttacks()
	if smbConf, err = os.ReadFile(c.path(SMBConf)); err != nil {
		t.Fatal(err)
	}

	// control: the same line in root's own smb.conf runs at the next logon,
	// so the probe above would have seen a planted one run
	f, err := os.OpenFile(c.path(SMBConf), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(preexec)
	f.Close()
	c.run(fmt.Sprintf("kill -HUP %d", smbdPID))
	c.poll("the control's root preexec to run", 15*time.Second, func() (bool, string) {
		c.put("control.pdf", 10*time.Second)
		found := c.pwned()
		return strings.Contains(found, "uid=0(root)"), found
	})
	c.run("find / -path /proc -prune -o -name pwned -type f -exec rm -f {} +")
	c.run("systemctl reload " + SMBService) // root's step renders smb.conf again
	if got, _ := os.ReadFile(c.path(SMBConf)); !bytes.Equal(got, smbConf) {
		t.Errorf("after the control, the reload did not render smb.conf back:\n%s", got)
	}
	c.put("after-control.pdf", 10*time.Second)
	if found := c.pwned(); found != "" {
		t.Errorf("after the control's reload, root preexec still runs: %s", found)
	}
	t.Logf("control: root preexec in root's own smb.conf ran as uid 0 at the next logon; gone after the reload")
}

// asDaemonUser runs a command inside the box as the daemon's user.
const asDaemonUser = "setpriv --reuid=" + User + " --regid=" + User + " --init-groups "

// container is a Debian root booted with systemd-nspawn.
type container struct {
	t       *testing.T
	root    string
	nspawn  *exec.Cmd
	exited  chan struct{}
	init    int // the container's PID 1, as this side sees it
	console string
	cgroups hostCgroupLayout
	cgroup  string
}

// hostCgroupLayout is how this machine's cgroups are mounted (or, in a mount
// namespace without them, such as `ip netns exec` gives, how to mount them).
type hostCgroupLayout struct {
	v2      bool     // cgroup2 alone at /sys/fs/cgroup
	mounted bool     // mounted in this mount namespace
	v1      []string // v1 hierarchies (name=systemd, controllers), when not v2
}

func hostCgroups() (hostCgroupLayout, error) {
	var l hostCgroupLayout
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return l, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && f[0] != "0" && f[1] != "" {
			l.v1 = append(l.v1, f[1])
		}
	}
	l.v2 = len(l.v1) == 0
	switch {
	case l.v2:
		_, err = os.Stat("/sys/fs/cgroup/cgroup.procs")
		l.mounted = err == nil
	default:
		if !strings.Contains(string(b), ":name=systemd:") {
			return l, errors.New("cgroup v1 without a name=systemd hierarchy: systemd-nspawn cannot boot here")
		}
		_, err1 := os.Stat("/sys/fs/cgroup/systemd/cgroup.procs")
		_, err2 := os.Stat("/sys/fs/cgroup/unified/cgroup.procs")
		l.mounted = err1 == nil && err2 == nil
	}
	return l, nil
}

// hierarchies are the cgroup folders the launcher gets a cgroup of its own in.
func (l hostCgroupLayout) hierarchies() []string {
	if l.v2 {
		return []string{"/sys/fs/cgroup"}
	}
	return []string{"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"}
}

// command runs a shell script where the cgroup file systems are mounted:
// here, or in a private mount namespace that mounts them first.
func (l hostCgroupLayout) command(script string, args ...string) *exec.Cmd {
	if l.mounted {
		return exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...)
	}
	var m strings.Builder
	m.WriteString("set -e\n")
	if l.v2 {
		m.WriteString("mount -t cgroup2 cgroup2 /sys/fs/cgroup\n")
	} else {
		m.WriteString("mount -t tmpfs -o mode=0755 cgroup /sys/fs/cgroup\n")
		for _, h := range l.v1 {
			dir := strings.TrimPrefix(h, "name=")
			opts := h
			if strings.HasPrefix(h, "name=") {
				opts = "none," + h
			}
			fmt.Fprintf(&m, "mkdir -p /sys/fs/cgroup/%s && mount -t cgroup -o %s cgroup /sys/fs/cgroup/%s\n", dir, opts, dir)
		}
		m.WriteString("mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified\n")
	}
	m.WriteString(script)
	return exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", m.String(), "sh"}, args...)...)
}

// boot starts systemd-nspawn on root, in a cgroup of its own, and finds the
// container's init. t.Cleanup stops the container (poweroff, else SIGTERM,
// else SIGKILL, each bounded) and removes the cgroups.
func boot(t *testing.T, root string, cg hostCgroupLayout) *container {
	t.Helper()
	c := &container{t: t, root: root, exited: make(chan struct{}), cgroups: cg,
		cgroup: fmt.Sprintf("scanwarden-boot-%d", os.Getpid()), console: filepath.Join(filepath.Dir(root), "console.log")}
	console, err := os.Create(c.console)
	if err != nil {
		t.Fatal(err)
	}
	defer console.Close()
	// the launcher moves itself into its own cgroups, then becomes nspawn
	script := `set -e
cg=$1; shift
for h in ` + strings.Join(cg.hierarchies(), " ") + `; do mkdir -p "$h/$cg"; echo $$ >"$h/$cg/cgroup.procs"; done
exec "$@"`
	c.nspawn = cg.command(script, c.cgroup, "systemd-nspawn", "-D", root, "--boot", "--private-network",
		"--register=no", "--keep-unit", "--console=read-only", "--machine=swboot")
	c.nspawn.Stdin = nil
	c.nspawn.Env = append(os.Environ(), "TERM=dumb") // the box's console without colours
	c.nspawn.Stdout, c.nspawn.Stderr = console, console
	start := time.Now()
	if err := c.nspawn.Start(); err != nil {
		t.Fatalf("systemd-nspawn: %v", err)
	}
	go func() { c.nspawn.Wait(); close(c.exited) }()
	t.Cleanup(c.stop)
	c.poll("the container's init", 20*time.Second, func() (bool, string) {
		select {
		case <-c.exited:
			t.Fatalf("systemd-nspawn exited at once: %v\n%s", c.nspawn.ProcessState, c.consoleTail())
		default:
		}
		c.init = containerInit(c.nspawn.Process.Pid)
		return c.init > 0, "no process of nspawn's is PID 1 of a namespace yet"
	})
	t.Logf("systemd-nspawn pid %d, the container's init pid %d (%v)", c.nspawn.Process.Pid, c.init, time.Since(start).Round(time.Millisecond))
	return c
}

// containerInit finds the process under nspawn that is PID 1 of its own
// PID namespace.
func containerInit(nspawn int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var ppid string
		var nspid []string
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "NSpid:"); ok {
				nspid = strings.Fields(v)
			}
		}
		if ppid == strconv.Itoa(nspawn) && len(nspid) >= 2 && nspid[len(nspid)-1] == "1" {
			return pid
		}
	}
	return 0
}

func (c *container) path(p string) string { return filepath.Join(c.root, p) }

func (c *container) consoleTail() string {
	b, _ := os.ReadFile(c.console)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// sh runs a shell line inside the booted box as root (every namespace of
// its init, a clean environment), bounded by 60 s, and returns its output
// (stderr included, trimmed) and exit code.
func (c *container) sh(line string) (string, int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nsenter", "-t", strconv.Itoa(c.init), "-a", "-w",
		"env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_PAGER=", "sh", "-c", line)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		c.t.Fatalf("in the booted box: %s: no answer in 60 s\n%s", line, out)
	case errors.As(err, &exit):
		return strings.TrimSpace(string(out)), exit.ExitCode()
	case err != nil:
		c.t.Fatalf("in the booted box: %s: %v", line, err)
	}
	return strings.TrimSpace(string(out)), 0
}

// run is sh that fails the test on a non-zero exit.
func (c *container) run(line string) string {
	c.t.Helper()
	out, code := c.sh(line)
	if code != 0 {
		c.t.Fatalf("in the booted box: %s: exit %d\n%s", line, code, out)
	}
	return out
}

// poll calls cond until it is done, at most for limit; past it the test
// fails with what cond last said.
func (c *container) poll(what string, limit time.Duration, cond func() (bool, string)) time.Duration {
	c.t.Helper()
	return c.pollEvery(what, limit, 200*time.Millisecond, cond)
}

// pollEvery is poll that looks every interval.
func (c *container) pollEvery(what string, limit, interval time.Duration, cond func() (bool, string)) time.Duration {
	c.t.Helper()
	start := time.Now()
	for {
		done, last := cond()
		if done {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			c.t.Fatalf("%s: not within %v; last: %s\nconsole:\n%s", what, limit, last, c.consoleTail())
		}
		time.Sleep(interval)
	}
}

// waitRunning waits for the boot to finish (systemctl is-system-running
// --wait); degraded names the failed units, which fail the test when they
// are scanwarden's.
func (c *container) waitRunning(limit time.Duration) {
	c.t.Helper()
	var state string
	took := c.poll("the boot to finish", limit, func() (bool, string) {
		out, _ := c.sh("timeout 30 systemctl is-system-running --wait")
		state = out
		return out == "running" || out == "degraded", out
	})
	c.t.Logf("booted in %v: %s", took.Round(time.Millisecond), state)
	if state == "degraded" {
		failed := c.run("systemctl list-units --failed --no-legend --plain")
		c.t.Logf("failed units:\n%s", failed)
		if strings.Contains(failed, "scanwarden") {
			c.t.Errorf("a scanwarden unit failed at boot:\n%s\n%s", failed, c.run("journalctl --no-pager -n 60 -u 'scanwarden*'"))
		}
	}
}

func (c *container) waitActive(limit time.Duration, units ...string) {
	c.t.Helper()
	took := c.poll(strings.Join(units, ", ")+" active", limit, func() (bool, string) {
		out, _ := c.sh("systemctl is-active " + strings.Join(units, " "))
		if strings.Count(out, "active") == len(units) && !strings.Contains(out, "inactive") {
			return true, out
		}
		return false, c.run("systemctl status --no-pager -n 20 " + strings.Join(units, " ") + " || true")
	})
	c.t.Logf("%s active (waited %v)", strings.Join(units, ", "), took.Round(time.Millisecond))
}

func showValue(show, key string) string {
	for _, l := range strings.Split(show, "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	return ""
}

func (c *container) mainPID(unit string) int {
	c.t.Helper()
	pid, err := strconv.Atoi(c.run("systemctl show -p MainPID --value " + unit))
	if err != nil || pid <= 0 {
		c.t.Fatalf("%s has no main process: %v", unit, err)
	}
	return pid
}

// uids is the Uid: line of a process in the box (real, effective, saved,
// fs), each followed by a space.
func (c *container) uids(pid int) string {
	c.t.Helper()
	for _, l := range strings.Split(c.run(fmt.Sprintf("cat /proc/%d/status", pid)), "\n") {
		if v, ok := strings.CutPrefix(l, "Uid:"); ok {
			return strings.Join(strings.Fields(v), " ") + " "
		}
	}
	c.t.Fatalf("/proc/%d/status has no Uid: line", pid)
	return ""
}

// put stores /var/tmp/scan.pdf on the share as name, as the MFP's account
// does, retrying while smbd is not there yet.
func (c *container) put(name string, limit time.Duration) {
	c.t.Helper()
	line := "smbclient //127.0.0.1/scans -p 44599 -U mfp%" + bootMFPPassword + " --use-kerberos=disabled -c 'cd _unsorted; put /var/tmp/scan.pdf " + name + "'"
	c.poll("put "+name+" on the share", limit, func() (bool, string) {
		out, code := c.sh(line)
		return code == 0 && !strings.Contains(out, "NT_STATUS"), out
	})
}

// catalogued waits for the daemon to list name (receiverList).
func (c *container) catalogued(name string, limit time.Duration) {
	c.t.Helper()
	took := c.poll(name+" catalogued", limit, func() (bool, string) {
		out, _ := c.sh(receiverList)
		return strings.Contains(out, `"file": "`+name+`"`), out
	})
	c.t.Logf("%s catalogued %v after the put", name, took.Round(time.Millisecond))
}

// reloaded does what should trigger the path unit and waits for systemd to
// have reloaded smbd's unit; it returns the journal of smbd's unit since.
func (c *container) reloaded(do func()) string {
	c.t.Helper()
	cursor := c.cursor()
	do()
	var journal string
	c.poll("the path unit to reload "+SMBService, 20*time.Second, func() (bool, string) {
		journal = c.journalAfter(cursor, SMBService)
		if strings.Contains(journal, "Reloaded ") {
			return true, journal
		}
		return false, journal + "\n" + c.run("ls -l "+AllowFile+"; systemctl status --no-pager scanwarden-smbd-reload.path scanwarden-smbd-reload.service || true")
	})
	return journal
}

// pwned lists the files a `root preexec` of the attacks wrote, anywhere in
// the box (smbd's private /tmp included), with their contents.
func (c *container) pwned() string {
	c.t.Helper()
	return c.run("find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -name pwned -type f -print -exec cat {} \\;")
}

// poweroff shuts the box down from inside and waits for nspawn to exit.
func (c *container) poweroff() {
	c.t.Helper()
	start := time.Now()
	c.sh("systemctl poweroff --no-block")
	select {
	case <-c.exited:
		c.t.Logf("powered off in %v: nspawn %v", time.Since(start).Round(time.Millisecond), c.nspawn.ProcessState)
		if !c.nspawn.ProcessState.Success() {
			c.t.Errorf("systemd-nspawn after poweroff: %v\n%s", c.nspawn.ProcessState, c.consoleTail())
		}
	case <-time.After(30 * time.Second):
		c.t.Errorf("no poweroff within 30 s\n%s", c.consoleTail())
	}
}

// stop is the cleanup: whatever state the box is in, it ends (poweroff,
// SIGTERM to nspawn, SIGKILL to nspawn and the box's init, each bounded)
// and its cgroups go.
func (c *container) stop() {
	steps := []struct {
		what string
		do   func()
		wait time.Duration
	}{
		{"poweroff", func() {
			exec.Command("nsenter", "-t", strconv.Itoa(c.init), "-a", "systemctl", "poweroff", "--no-block").Run()
		}, 30 * time.Second},
		{"SIGTERM", func() { c.nspawn.Process.Signal(syscall.SIGTERM) }, 10 * time.Second},
		{"SIGKILL", func() {
			if c.init > 0 {
				syscall.Kill(c.init, syscall.SIGKILL)
			}
			c.nspawn.Process.Kill()
		}, 10 * time.Second},
	}
	for _, s := range steps {
		select {
		case <-c.exited:
		default:
			if s.what == "poweroff" && c.init == 0 {
				continue
			}
			c.t.Logf("cleanup: the box still runs: %s", s.what)
			s.do()
			select {
			case <-c.exited:
			case <-time.After(s.wait):
			}
		}
	}
	select {
	case <-c.exited:
	default:
		c.t.Errorf("cleanup: systemd-nspawn (pid %d) did not end", c.nspawn.Process.Pid)
	}
	var dirs []string
	for _, h := range c.cgroups.hierarchies() {
		dirs = append(dirs, filepath.Join(h, c.cgroup))
	}
	cmd := c.cgroups.command(`for d in "$@"; do [ ! -d "$d" ] || find "$d" -depth -type d -exec rmdir {} + ; done`, dirs...)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Errorf("cleanup: removing the cgroups %q: %v\n%s", dirs, err, out)
	}
}
