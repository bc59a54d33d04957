package systemd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestDebInstall installs the Debian package that scripts/package builds into
// a throwaway Debian 12 root (scripts/debroot: mmdebstrap, cached under
// /var/cache/scanwarden-test), with dpkg -i and the package's own maintainer
// scripts, and checks files, owners, modes, enablement, the systemd checks on
// the installed units, an upgrade from version N to N+1 that keeps the
// admin's config, the data and the key, then remove and purge.
func TestDebInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the Debian install test builds two packages")
	}
	if os.Geteuid() != 0 {
		testlab.Missing(t, "the Debian install test needs root (chroot, device nodes, file owners)")
	}
	for _, tool := range []string{"unshare", "chroot", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			testlab.Missing(t, tool+" not installed: Debian install test skipped")
		}
	}
	tarball := debRoot(t)

	dir := t.TempDir()
	start := time.Now()
	v1, v2 := "0.0.1~test1", "0.0.1~test2"
	deb1 := buildPackage(t, v1)
	deb2 := buildPackage(t, v2)
	t.Logf("packages N and N+1 ready in %v (built once per test process)", time.Since(start).Round(time.Second))

	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if out, err := exec.Command("tar", "-C", root, "-xf", tarball).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tarball, err, out)
	}
	t.Logf("root unpacked in %v", time.Since(start).Round(time.Millisecond))
	for _, deb := range []string{deb1, deb2} {
		b, err := os.ReadFile(deb)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "tmp", filepath.Base(deb)), b, 0o644)
	}
	r := debianRoot{t: t, dir: root}

	// --- install N
	r.run("dpkg", "-i", "/tmp/"+filepath.Base(deb1))
	if got := r.run("dpkg-query", "-W", "-f=${Status} ${Version}", "scanwarden"); got != "install ok installed "+v1 {
		t.Fatalf("after dpkg -i: %q", got)
	}
	if got := r.run("/usr/bin/scanwarden", "version"); !strings.HasPrefix(got, "scanwarden "+v1+" (") || !strings.Contains(got, "built with go") {
		t.Errorf("scanwarden version = %q", got)
	}
	fields := r.run("dpkg-query", "-W", "-f=${Depends}|${Recommends}", "scanwarden")
	if !regexp.MustCompile(`(^|, )samba(,|\||$)`).MatchString(fields) || !strings.Contains(fields, "|smbclient") {
		t.Errorf("Depends|Recommends = %q, want samba and smbclient", fields)
	}
	// samba only recommends it; the share's full_audit needs it
	if !regexp.MustCompile(`(^|, )samba-vfs-modules(,|\||$)`).MatchString(strings.Split(fields, "|")[0]) {
		t.Errorf("Depends = %q, want samba-vfs-modules", fields)
	}
	if got := r.run("dpkg-query", "-W", "-f=${Conffiles}", "scanwarden"); !strings.Contains(got, ConfigFile+" ") {
		t.Errorf("conffiles = %q, want %s", got, ConfigFile)
	}
	uid, gid := r.user(User)
	r.check(Binary, 0o755, 0, 0, false)
	for _, u := range Units() {
		r.check(filepath.Join(UnitDir, u), 0o644, 0, 0, false)
	}
	r.check("/usr/lib/sysusers.d/scanwarden.conf", 0o644, 0, 0, false)
	r.check("/usr/lib/tmpfiles.d/scanwarden.conf", 0o644, 0, 0, false)
	r.check(ConfigFile, 0o644, 0, 0, false)
	r.check(filepath.Dir(ConfigFile), 0o755, 0, 0, true)
	r.check(KeyFile, 0o600, 0, 0, false)
	r.check(StateDir, 0o700, uid, gid, true)
	r.check(LogsDir, 0o750, uid, gid, true)
	r.check(SmbdDir, 0o755, 0, 0, true)
	key := r.read(KeyFile)
	if !regexp.MustCompile(`^[0-9a-f]{64}\n$`).Match(key) {
		t.Errorf("%s is not 64 hex digits and a newline: %d bytes", KeyFile, len(key))
	}
	for _, u := range []string{Service, SMBService, "scanwarden-smbd-reload.path"} {
		link := filepath.Join("/etc/systemd/system/multi-user.target.wants", u)
		if target, err := os.Readlink(filepath.Join(root, link)); err != nil || filepath.Base(target) != u {
			t.Errorf("%s not enabled: %s → %q, %v", u, link, target, err)
		}
	}
	r.analyze()
	r.manPages()
	r.doctor()
	r.missingModule()

	// --- the admin edits the config (turns the share on); the daemon has data
	conf := append(r.read(ConfigFile), []byte("\n# edited by the admin\n")...)
	conf = bytes.Replace(conf, []byte("enabled = false"), []byte("enabled = true"), 1)
	conf = bytes.Replace(conf, []byte(`listen = ""`), []byte(`listen = "127.0.0.1:44599"`), 1)
	conf = bytes.Replace(conf, []byte(`# password_file = `), []byte(`password_file = `), 1)
	conf = bytes.Replace(conf, []byte("\nexternal_smbd = true"), []byte("\nexternal_smbd = true\nquiet = \"1s\""), 1)
	conf = bytes.Replace(conf, []byte(`listen = "0.0.0.0:8080"`), []byte(`listen = "127.0.0.1:0"`), 1)
	r.write(ConfigFile, conf, 0o644, 0, 0)
	r.write("/etc/scanwarden/receiver.password", []byte("Mfp.Install-25\n"), 0o640, 0, gid)
	r.shareRootStep(uid, gid)
	r.installedLayout()
	data := []byte("precious scans and history\n")
	r.write(filepath.Join(StateDir, "scanwarden.db"), data, 0o600, uid, gid)

	// --- upgrade to N+1: no question asked, config, data, key and user kept
	r.run("dpkg", "-i", "/tmp/"+filepath.Base(deb2))
	if got := r.run("dpkg-query", "-W", "-f=${Status} ${Version}", "scanwarden"); got != "install ok installed "+v2 {
		t.Fatalf("after the upgrade: %q", got)
	}
	if got := r.run("/usr/bin/scanwarden", "version"); !strings.HasPrefix(got, "scanwarden "+v2+" (") {
		t.Errorf("after the upgrade scanwarden version = %q", got)
	}
	if got := r.read(ConfigFile); !bytes.Equal(got, conf) {
		t.Errorf("the upgrade changed the admin's %s:\n%s", ConfigFile, got)
	}
	if got := r.read(KeyFile); !bytes.Equal(got, key) {
		t.Errorf("the upgrade replaced the sealing key")
	}
	if got := r.read(filepath.Join(StateDir, "scanwarden.db")); !bytes.Equal(got, data) {
		t.Errorf("the upgrade changed the data: %q", got)
	}
	r.check(filepath.Join(StateDir, "scanwarden.db"), 0o600, uid, gid, false)
	r.check(StateDir, 0o700, uid, gid, true)
	if u2, g2 := r.user(User); u2 != uid || g2 != gid {
		t.Errorf("the upgrade changed %s from %d:%d to %d:%d", User, uid, gid, u2, g2)
	}

	// --- remove: program and units go, config and data stay, units masked
	r.run("dpkg", "-r", "scanwarden")
	r.gone(Binary, filepath.Join(UnitDir, Service))
	r.check(ConfigFile, 0o644, 0, 0, false)
	r.check(filepath.Join(StateDir, "scanwarden.db"), 0o600, uid, gid, false)
	if target, err := os.Readlink(filepath.Join(root, "/etc/systemd/system", Service)); err != nil || target != "/dev/null" {
		t.Errorf("after dpkg -r %s is not masked: %q, %v", Service, target, err)
	}

	// --- purge: nothing of scanwarden's is left but its system user
	r.run("dpkg", "-P", "scanwarden")
	r.gone(filepath.Dir(ConfigFile), StateDir, LogsDir, SmbdDir,
		filepath.Join("/etc/systemd/system", Service),
		filepath.Join("/etc/systemd/system/multi-user.target.wants", Service),
		filepath.Join("/etc/systemd/system/multi-user.target.wants", SMBService))
	if passwd := r.read("/etc/passwd"); bytes.Contains(passwd, []byte("\nmfp:")) {
		t.Errorf("purge left the MFP account's Unix user that the smbd unit added")
	}
	left, _ := filepath.Glob(filepath.Join(root, "var/lib/systemd/deb-systemd-helper-*/*scanwarden*"))
	more, _ := filepath.Glob(filepath.Join(root, "var/lib/systemd/deb-systemd-helper-*/*/*scanwarden*"))
	if left = append(left, more...); len(left) > 0 {
		t.Errorf("purge left deb-systemd-helper state: %q", left)
	}
	if got := r.run("sh", "-c", "dpkg-query -W -f='${Status}' scanwarden 2>&1 || true"); strings.Contains(got, "installed") && !strings.Contains(got, "not-installed") {
		t.Errorf("after purge: %q", got)
	}
}

// debRoot returns the cached root tarball, building it once when Debian's
// archive can be reached, and skips with the reason when it cannot.
func debRoot(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("../scripts/debroot")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return strings.TrimSpace(string(out))
	case errors.As(err, &exit) && (exit.ExitCode() == 3 || exit.ExitCode() == 4):
		testlab.Missing(t, "no cached Debian root and none can be built here — run scripts/debroot as root "+
			"outside the lab namespace once (scripts/test does): "+strings.TrimSpace(stderr.String()))
	}
	t.Fatalf("scripts/debroot: %v\n%s", err, stderr.Bytes())
	return ""
}

// packages are the packages built by this test process, by version, in
// packages.dir (TestMain removes it): TestDebInstall's N+1 is the package
// TestDebBoot boots, built once.
var packages struct {
	sync.Mutex
	dir   string
	built map[string]string
}

// buildPackage builds the Debian package of version with scripts/package,
// once per test process.
func buildPackage(t *testing.T, version string) string {
	t.Helper()
	packages.Lock()
	defer packages.Unlock()
	if deb, ok := packages.built[version]; ok {
		return deb
	}
	if packages.dir == "" {
		t.Fatal("buildPackage: no package folder (TestMain makes it)")
	}
	out := filepath.Join(packages.dir, version)
	cmd := exec.Command("../scripts/package")
	cmd.Env = append(os.Environ(), "VERSION="+version, "OUT="+out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/package: %v\n%s", err, b)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	deb := lines[len(lines)-1]
	if want := filepath.Join(out, "scanwarden_"+version+"_"); !strings.HasPrefix(deb, want) || !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("scripts/package wrote %q, want %s<arch>.deb", deb, want)
	}
	if packages.built == nil {
		packages.built = map[string]string{}
	}
	packages.built[version] = deb
	return deb
}

// debianRoot runs commands inside an unpacked Debian root: chroot in a
// private mount namespace with its own /proc, which vanishes with it.
type debianRoot struct {
	t   *testing.T
	dir string
}

func (r debianRoot) run(args ...string) string {
	r.t.Helper()
	script := `mount -t proc proc "$0/proc" && exec chroot "$0" "$@"`
	cmd := exec.Command("unshare", append([]string{"--mount", "--fork", "sh", "-c", script, r.dir}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C", "DEBIAN_FRONTEND=noninteractive"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("in the Debian root: %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

func (r debianRoot) read(path string) []byte {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, path))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r debianRoot) write(path string, b []byte, mode os.FileMode, uid, gid int) {
	r.t.Helper()
	p := filepath.Join(r.dir, path)
	if err := os.WriteFile(p, b, mode); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chown(p, uid, gid); err != nil {
		r.t.Fatal(err)
	}
}

// user reads a user's uid and gid from the root's /etc/passwd.
func (r debianRoot) user(name string) (uid, gid int) {
	r.t.Helper()
	for _, line := range strings.Split(string(r.read("/etc/passwd")), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[0] == name {
			uid, _ = strconv.Atoi(f[2])
			gid, _ = strconv.Atoi(f[3])
			if f[6] != "/usr/sbin/nologin" || uid <= 0 || uid >= 1000 {
				r.t.Errorf("passwd line %q: want a system uid and /usr/sbin/nologin", line)
			}
			return uid, gid
		}
	}
	r.t.Fatalf("no user %s in the root's /etc/passwd", name)
	return -1, -1
}

func (r debianRoot) check(path string, mode os.FileMode, uid, gid int, dir bool) {
	r.t.Helper()
	st, err := os.Lstat(filepath.Join(r.dir, path))
	if err != nil {
		r.t.Errorf("%s: %v", path, err)
		return
	}
	if st.Mode().Perm() != mode || st.IsDir() != dir || (!dir && !st.Mode().IsRegular()) {
		r.t.Errorf("%s: mode %v, want %04o (dir %v)", path, st.Mode(), mode, dir)
	}
	if u, g := owner(st); u != uid || g != gid {
		r.t.Errorf("%s: owner %d:%d, want %d:%d", path, u, g, uid, gid)
	}
}

func (r debianRoot) gone(paths ...string) {
	r.t.Helper()
	for _, p := range paths {
		if _, err := os.Lstat(filepath.Join(r.dir, p)); !errors.Is(err, os.ErrNotExist) {
			r.t.Errorf("%s is still there (%v)", p, err)
		}
	}
}

// doctor runs `scanwarden doctor --json` as root in the fresh install: the
// shipped config is valid, the key and the data dir are as the daemon needs
// them, Samba is there. (Ports and the daemon depend on the host: not judged.)
func (r debianRoot) doctor() {
	r.t.Helper()
	out := r.run("sh", "-c", "scanwarden doctor --json; true")
	var rep struct {
		Config string `json:"config"`
		Checks []struct {
			ID, Status, Detail, Fix string
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		r.t.Fatalf("scanwarden doctor --json: %v\n%s", err, out)
	}
	if rep.Config != ConfigFile {
		r.t.Errorf("doctor read %q, want %s", rep.Config, ConfigFile)
	}
	seen := map[string]bool{}
	for _, c := range rep.Checks {
		switch c.ID {
		case "config", "key", "data_dir", "samba":
			seen[c.ID] = true
			if c.Status != "ok" {
				r.t.Errorf("doctor on the fresh install: %s %s: %s (fix: %s)", c.ID, c.Status, c.Detail, c.Fix)
			}
		}
	}
	if len(seen) != 4 {
		r.t.Errorf("doctor lacks checks: %s", out)
	}
}

// analyze runs systemd-analyze verify and security on the units as installed.
func (r debianRoot) analyze() {
	r.t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		r.t.Log("systemd-analyze not installed: installed units not verified")
		return
	}
	// With the man-page check: every Documentation=man: page (scanwarden(8),
	// smbd(8)) must be among the root's; systemd runs the host's man.
	if _, err := exec.LookPath("man"); err != nil {
		r.t.Errorf("man is not installed (Debian package man-db): systemd-analyze verify cannot check the units' man pages")
		return
	}
	manpath := filepath.Join(r.dir, "usr/share/man")
	for _, u := range Units() {
		if out, err := verify(analyze, r.dir, u, manpath); err != nil {
			r.t.Errorf("installed %s: systemd-analyze verify: %v\n%s", u, err, out)
		}
	}
	r.t.Logf("systemd-analyze verify, man pages checked (MANPATH=%s): %d units", manpath, len(Units()))
	// The check is on: without the root's pages the daemon's unit fails it.
	if out, err := verify(analyze, r.dir, Service, r.t.TempDir()); err == nil || !strings.Contains(out, "scanwarden(8)") {
		r.t.Errorf("systemd-analyze verify passed %s with no man pages: %v\n%s", Service, err, out)
	}
	score, word := exposure(r.t, analyze, r.dir, Service)
	r.t.Logf("installed %s: exposure %.1f %s", Service, score, word)
	if score > maxExposure {
		r.t.Errorf("installed %s: exposure %.1f, want at most %.1f", Service, score, maxExposure)
	}
}

// manPages checks the installed manual pages: where Debian wants them,
// gzipped, and rendered by man without a warning.
func (r debianRoot) manPages() {
	r.t.Helper()
	man, err := exec.LookPath("man")
	if err != nil {
		r.t.Errorf("man is not installed (Debian package man-db): the installed pages cannot be rendered")
		return
	}
	for _, p := range []string{"/usr/share/man/man8/scanwarden.8.gz", "/usr/share/man/man5/scanwarden.toml.5.gz"} {
		r.check(p, 0o644, 0, 0, false)
		cmd := exec.Command(man, "--warnings", "-l", filepath.Join(r.dir, p))
		cmd.Env = append(os.Environ(), "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100", "LANG=C.UTF-8")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		switch {
		case err != nil:
			r.t.Errorf("man -l %s: %v\n%s", p, err, stderr.String())
		case strings.Contains(stderr.String(), "warning"):
			r.t.Errorf("man -l %s warns:\n%s", p, stderr.String())
		case !strings.Contains(string(out), "scanwarden") || len(out) < 2000:
			r.t.Errorf("man -l %s rendered %d bytes", p, len(out))
		default:
			r.t.Logf("man -l %s: %d bytes", p, len(out))
		}
	}
}

// sh runs a shell line in the root and returns its output and exit code
// (stderr included), without failing the test.
func (r debianRoot) sh(line string) (string, int) {
	r.t.Helper()
	script := `mount -t proc proc "$0/proc" && exec chroot "$0" sh -c "$1"`
	cmd := exec.Command("unshare", "--mount", "--fork", "sh", "-c", script, r.dir, line)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		r.t.Fatalf("in the Debian root: %s: %v", line, err)
	}
	return string(out), 0
}

// missingModule provokes a minimal box without samba-vfs-modules: the
// module moved aside, doctor fails the samba check naming the package to
// install, and the smbd unit's root step refuses to start the share.
func (r debianRoot) missingModule() {
	r.t.Helper()
	mods, _ := filepath.Glob(filepath.Join(r.dir, "usr/lib/*/samba/vfs/full_audit.so"))
	if len(mods) != 1 {
		r.t.Fatalf("full_audit.so in the root: %q", mods)
	}
	aside := mods[0] + ".aside"
	if err := os.Rename(mods[0], aside); err != nil {
		r.t.Fatal(err)
	}
	defer os.Rename(aside, mods[0])
	out, _ := r.sh("scanwarden doctor --json")
	var rep struct {
		Checks []struct{ ID, Status, Detail, Fix string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		r.t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	for _, c := range rep.Checks {
		if c.ID == "samba" {
			if c.Status != "fail" || !strings.Contains(c.Fix, "samba-vfs-modules") || !strings.Contains(c.Detail, "full_audit") {
				r.t.Errorf("doctor without full_audit: %+v", c)
			}
			return
		}
	}
	r.t.Errorf("doctor has no samba check: %s", out)
}

// shareRootStep runs scanwarden-smbd.service's root step (ExecStartPre=)
// in the installed shape — the package's binary, paths and config, Debian's
// Samba — on the allowlist the daemon's user hands over, then the attacks of
// issue 18 on what that user can write: `root preexec` and `passdb backend =
// smbpasswd:/root/file` appended to the allowlist and written as an smb.conf
// at the old place, the allowlist a symlink to /etc/shadow, a symlink at the
// old private dir, 0.0.0.0/0 in the allowlist. Each is refused or ignored, smb.conf stays byte for byte,
// and no root-owned file appears or changes.
func (r debianRoot) shareRootStep(uid, gid int) {
	r.t.Helper()
	allow := filepath.Join(ReceiverDir, "smbd-allow")
	r.write(allow, []byte("127.0.0.1\n192.168.10.7\n"), 0o644, uid, gid)
	prepare := Binary + " receiver prepare --config " + ConfigFile
	if out, code := r.sh(prepare); code != 0 || !strings.Contains(out, SMBConf+" written") {
		r.t.Fatalf("%s: exit %d\n%s", prepare, code, out)
	}
	r.check(SMBConf, 0o644, 0, 0, false)
	good := r.read(SMBConf)
	if !bytes.Contains(good, []byte("hosts allow = 127.0.0.1/32 192.168.10.7/32")) || !bytes.Contains(good, []byte("force user = "+User)) {
		r.t.Errorf("smb.conf rendered by root:\n%s", good)
	}
	if got := r.read(filepath.Join(SmbdDir, "created-users")); string(got) != "mfp\n" {
		r.t.Errorf("created-users = %q", got)
	}
	if out, code := r.sh("pdbedit -s " + SMBConf + " -L"); code != 0 || !strings.Contains(out, "mfp:") {
		r.t.Errorf("pdbedit -L: %d %s", code, out)
	}
	// the attacks: root-owned files that must not appear or change
	r.write("/root/root-file", []byte("root's own\n"), 0o640, 0, 0)
	shadow := r.read("/etc/shadow")
	old := filepath.Join(ReceiverDir, "smbd")
	if err := os.MkdirAll(filepath.Join(r.dir, old), 0o700); err != nil {
		r.t.Fatal(err)
	}
	os.Chown(filepath.Join(r.dir, old), uid, gid)
	preexec := "\troot preexec = /bin/sh -c \"id > /root/preexec-ran\"\n"
	passdb := "\tpassdb backend = smbpasswd:/root/root-file\n"
	r.write(filepath.Join(old, "smb.conf"), []byte("[global]\n"+preexec+passdb), 0o644, uid, gid)
	if err := os.Symlink("/root", filepath.Join(r.dir, old, "private")); err != nil {
		r.t.Fatal(err)
	}
	os.Lchown(filepath.Join(r.dir, old, "private"), uid, gid)
	for _, a := range []struct {
		name, text, link, refused string
	}{
		{"root preexec in the allowlist", "127.0.0.1\n[global]\n" + preexec, "", "[global]"},
		{"passdb redirect in the allowlist", "127.0.0.1\n" + passdb, "", "passdb backend = smbpasswd:/root/root-file"},
		{"the allowlist a symlink to /etc/shadow", "", "/etc/shadow", "symbolic link"},
		{"the whole Internet in the allowlist", "127.0.0.1\n0.0.0.0/0\n", "", "0.0.0.0/0"},
		{"old smb.conf and private symlink only", "127.0.0.1\n192.168.10.7\n", "", ""},
	} {
		os.Remove(filepath.Join(r.dir, allow))
		if a.link != "" {
			os.Symlink(a.link, filepath.Join(r.dir, allow))
			os.Lchown(filepath.Join(r.dir, allow), uid, gid)
		} else {
			r.write(allow, []byte(a.text), 0o644, uid, gid)
		}
		out, code := r.sh(prepare)
		if code != 0 {
			r.t.Errorf("%s: the root step failed (the share would stop): %d %s", a.name, code, out)
		}
		if a.refused != "" && (!strings.Contains(out, "refused") || !strings.Contains(out, strings.ReplaceAll(a.refused, `"`, `\"`))) {
			r.t.Errorf("%s: not refused or not named:\n%s", a.name, out)
		}
		if got := r.read(SMBConf); !bytes.Equal(got, good) {
			r.t.Errorf("%s: smb.conf changed:\n%s", a.name, got)
		}
		if got := r.read("/root/root-file"); string(got) != "root's own\n" {
			r.t.Errorf("%s: /root/root-file changed: %q", a.name, got)
		}
		r.check("/root/root-file", 0o640, 0, 0, false)
		if got := r.read("/etc/shadow"); !bytes.Equal(got, shadow) {
			r.t.Errorf("%s: /etc/shadow changed", a.name)
		}
		ents, _ := os.ReadDir(filepath.Join(r.dir, "root"))
		for _, e := range ents {
			if e.Name() != "root-file" && !strings.HasPrefix(e.Name(), ".") {
				r.t.Errorf("%s: root-owned side effect /root/%s", a.name, e.Name())
			}
		}
		r.t.Logf("attack %q: root step exit %d; %s", a.name, code, strings.TrimSpace(out))
	}
	os.Remove(filepath.Join(r.dir, allow))
	r.write(allow, []byte("127.0.0.1\n192.168.10.7\n"), 0o644, uid, gid)
}

// installedLayout runs the installed layout by hand in the Debian root, as
// the units say (no systemd in a chroot; TestDebBoot boots it): the daemon
// as user scanwarden with scanwarden.service's environment (its data dir,
// the key as a credential), which hands over its allowlist; the smbd unit's
// root step; smbd started by root with the unit's ExecStart=; then an MFP
// (smbclient) stores a scan on the share, and the unprivileged daemon
// catalogues it. The daemon's user can neither read smbd's passdb nor
// write its smb.conf, and smbd logs in root's folder, not /var/log/samba.
func (r debianRoot) installedLayout() {
	r.t.Helper()
	const asDaemon = "setpriv --reuid=scanwarden --regid=scanwarden --init-groups env -i PATH=/usr/bin:/bin " +
		"SCANWARDEN_STATE_DIR=/var/lib/scanwarden CREDENTIALS_DIRECTORY=/run/creds "
	script := `set -u
install -d -m 0700 -o scanwarden /run/creds
install -m 0400 -o scanwarden /etc/scanwarden/secret.key /run/creds/secret.key
rm -f /var/lib/scanwarden/receiver/smbd-allow
` + asDaemon + `/usr/bin/scanwarden serve --config /etc/scanwarden/scanwarden.toml >/var/tmp/serve.log 2>&1 &
for i in $(seq 150); do [ -s /var/lib/scanwarden/receiver/smbd-allow ] && break; sleep 0.1; done
echo "ALLOW $(stat -c '%U %a' /var/lib/scanwarden/receiver/smbd-allow)"
` + execLine(SMBService, "ExecStartPre") + ` || echo "PREPARE FAILED"
` + execLine(SMBService, "ExecStart") + ` </dev/null >/var/tmp/smbd.out 2>&1 &
printf '%%PDF-1.4\n1 0 obj\n<< /Body (installed) >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%%%EOF\n' >/var/tmp/scan.pdf
for i in $(seq 50); do
	smbclient //127.0.0.1/scans -p 44599 -U mfp%Mfp.Install-25 --use-kerberos=disabled -c 'cd _unsorted; put /var/tmp/scan.pdf scan1.pdf' >/var/tmp/put.out 2>&1 && { echo PUT OK; break; }
	sleep 0.2
done
for i in $(seq 100); do
	out=$(` + asDaemon + `/usr/bin/scanwarden receiver list --json 2>&1)
	case "$out" in *scan1.pdf*) echo "LIST $out" | tr -d '\n'; echo; break ;; esac
	sleep 0.2
done
` + asDaemon + `cat /var/lib/scanwarden-smbd/private/passdb.tdb >/dev/null 2>&1 && echo "DAEMON READS PASSDB"
` + asDaemon + `sh -c 'echo "root preexec = /bin/true" >> /var/lib/scanwarden-smbd/smb.conf' 2>/dev/null && echo "DAEMON WRITES SMB.CONF"
[ -e /var/log/samba/log.smbd ] && echo "LOGGED TO /var/log/samba"
[ -s /var/lib/scanwarden-smbd/log/log.smbd ] && echo "LOG IN ROOT'S DIR"
grep -c . /var/tmp/put.out >/dev/null; tail -n 3 /var/tmp/put.out /var/tmp/serve.log
for i in $(seq 100); do grep -q '"share_check":{"cause":"ok"' /var/lib/scanwarden/receiver/receiver.json && { echo "DAEMON PROBE OK"; break; }; sleep 0.2; done
` + asDaemon + `/usr/bin/scanwarden receiver status --config /etc/scanwarden/scanwarden.toml >/var/tmp/status.out 2>&1; echo "STATUS EXIT $?"; grep '^share:' /var/tmp/status.out
echo DOCTOR-BEGIN; /usr/bin/scanwarden doctor --json; echo DOCTOR-END
for m in /usr/lib/*/samba/vfs/full_audit.so; do mv "$m" "$m.aside"; done
` + asDaemon + `/usr/bin/scanwarden receiver status --config /etc/scanwarden/scanwarden.toml >/var/tmp/status.out 2>&1; echo "NOMODULE STATUS EXIT $?"; grep -A2 '^share:' /var/tmp/status.out
echo DOCTOR-BEGIN; /usr/bin/scanwarden doctor --json; echo DOCTOR-END
for m in /usr/lib/*/samba/vfs/full_audit.so.aside; do mv "$m" "${m%.aside}"; done
`
	out, code := r.shPID(script)
	r.t.Logf("installed layout by hand (exit %d):\n%s", code, out)
	for _, want := range []string{"ALLOW scanwarden 644", "PUT OK", `"file": "scan1.pdf"`, "LOG IN ROOT'S DIR"} {
		if !strings.Contains(out, want) {
			r.t.Errorf("installed layout: no %q in\n%s", want, out)
		}
	}
	for _, bad := range []string{"PREPARE FAILED", "DAEMON READS PASSDB", "DAEMON WRITES SMB.CONF", "LOGGED TO /var/log/samba"} {
		if strings.Contains(out, bad) {
			r.t.Errorf("installed layout: %s", bad)
		}
	}
	// The share probe (issue 18): the unprivileged daemon's own (every 10 s
	// until it passes, in receiver.json), its user's `receiver status` and
	// root's doctor log on to the share as the MFP; with full_audit.so gone
	// (a box without samba-vfs-modules) the latter two fail naming the
	// package.
	for _, want := range []string{"DAEMON PROBE OK", "STATUS EXIT 0", "share:     ok, the MFP account mfp logged on", "NOMODULE STATUS EXIT 1",
		"share:     REFUSES THE MFPs (vfs-module-missing", "fix: apt-get install samba-vfs-modules"} {
		if !strings.Contains(out, want) {
			r.t.Errorf("share probe: no %q in\n%s", want, out)
		}
	}
	for i, want := range []struct{ status, detail, fix string }{{"ok", "the MFP account mfp logged on and connected", ""},
		{"fail", "(vfs-module-missing)", "apt-get install samba-vfs-modules"}} {
		c := doctorCheck(r.t, out, i, "receiver.share")
		if c.Status != want.status || !strings.Contains(c.Detail, want.detail) || !strings.Contains(c.Fix, want.fix) {
			r.t.Errorf("doctor %d: receiver.share %+v, want %+v", i, c, want)
		}
	}
}

// doctorCheck is check id of the n-th `doctor --json` printed between
// DOCTOR-BEGIN and DOCTOR-END in out.
func doctorCheck(t *testing.T, out string, n int, id string) (c struct{ ID, Status, Detail, Fix string }) {
	t.Helper()
	parts := strings.Split(out, "DOCTOR-BEGIN\n")
	if len(parts) <= n+1 {
		t.Errorf("no doctor run %d in\n%s", n, out)
		return c
	}
	body, _, _ := strings.Cut(parts[n+1], "DOCTOR-END")
	var rep struct {
		Checks []struct{ ID, Status, Detail, Fix string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Errorf("doctor --json: %v\n%s", err, body)
		return c
	}
	for _, x := range rep.Checks {
		if x.ID == id {
			return x
		}
	}
	t.Errorf("doctor has no %s: %s", id, body)
	return c
}

// shPID is sh in a PID namespace of its own: whatever the line starts in
// the background ends with it.
func (r debianRoot) shPID(line string) (string, int) {
	r.t.Helper()
	script := `mount -t proc proc "$0/proc" && exec chroot "$0" sh -c "$1"`
	cmd := exec.Command("unshare", "--mount", "--pid", "--fork", "sh", "-c", script, r.dir, line)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		r.t.Fatalf("in the Debian root: %v", err)
	}
	return string(out), 0
}

// execLine is a unit's command line for key (ExecStart, ExecStartPre: the
// first), without systemd's prefixes ("+" and the like).
func execLine(unit, key string) string {
	b, err := Files.ReadFile(unit)
	if err != nil {
		panic(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+"="); ok {
			return strings.TrimLeft(v, "+-@:!")
		}
	}
	panic(unit + " has no " + key)
}
