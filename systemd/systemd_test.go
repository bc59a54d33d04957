package systemd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/testlab"
)

// maxExposure is the highest `systemd-analyze security` score the daemon's
// unit may have (the bar; systemd calls up to 4.9 "OK").
const maxExposure = 2.5

func needAnalyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testlab.Missing(t, "systemd-analyze not installed (Debian package systemd): unit checks skipped")
	}
	return p
}

// fakeRoot lays out a root folder for systemd-analyze --root: the host's
// system units (so targets such as sysinit.target resolve), ours, and an
// executable stand-in for every program our units start (verify checks only
// that it exists and is executable). The Debian install test runs the same
// checks on a root where the package was really installed.
func fakeRoot(t *testing.T, override map[string]string) string {
	t.Helper()
	root := t.TempDir()
	unitDir := filepath.Join(root, UnitDir)
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, hostDir := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		entries, err := os.ReadDir(hostDir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(hostDir, e.Name()))
			if err != nil {
				continue
			}
			writeFile(t, filepath.Join(unitDir, e.Name()), b, 0o644)
		}
		break
	}
	for _, u := range Units() {
		b, err := Files.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := override[u]; ok {
			b = []byte(o)
		}
		writeFile(t, filepath.Join(unitDir, u), b, 0o644)
		for _, prog := range execPrograms(string(b)) {
			writeFile(t, filepath.Join(root, prog), []byte("#!/bin/sh\nexit 0\n"), 0o755)
		}
	}
	return root
}

func writeFile(t *testing.T, path string, b []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, mode); err != nil {
		t.Fatal(err)
	}
}

// execPrograms lists the absolute program paths of a unit's Exec*= lines.
func execPrograms(unit string) []string {
	var progs []string
	for _, line := range strings.Split(unit, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.HasPrefix(k, "Exec") {
			continue
		}
		f := strings.Fields(strings.TrimLeft(v, "-@:+!"))
		if len(f) > 0 && strings.HasPrefix(f[0], "/") {
			progs = append(progs, f[0])
		}
	}
	return progs
}

// verify runs systemd-analyze verify on one unit of root. systemd only warns
// about an unknown key or a bad value, so any output counts as a failure.
// With manpath set, systemd also runs `man` for each Documentation=man:
// page, which must exist: MANPATH makes man look there only (the installed
// root's pages, not the host's). manpath "" skips that check (--man=no):
// the fake root has no pages; the Debian install test has them.
func verify(analyze, root, unit, manpath string) (string, error) {
	args := []string{"verify", "--root=" + root, unit}
	if manpath == "" {
		args = append(args, "--man=no")
	}
	cmd := exec.Command(analyze, args...)
	if manpath != "" {
		cmd.Env = append(os.Environ(), "MANPATH="+manpath, "MANPAGER=cat", "PAGER=cat")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), err
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return s, errors.New("systemd-analyze verify printed warnings")
	}
	return "", nil
}

var exposureLine = regexp.MustCompile(`Overall exposure level for (\S+): ([0-9.]+) (\S+)`)

// exposure runs systemd-analyze security --offline=yes on one unit of root
// and returns its overall score and rating word.
func exposure(t *testing.T, analyze, root, unit string) (float64, string) {
	t.Helper()
	out, err := exec.Command(analyze, "security", "--offline=yes", "--no-pager", "--root="+root, unit).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security %s: %v\n%s", unit, err, out)
	}
	m := exposureLine.FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security %s: no overall exposure line in\n%s", unit, out)
	}
	score, err := strconv.ParseFloat(string(m[2]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return score, string(m[3])
}

func TestUnitsVerify(t *testing.T) {
	analyze := needAnalyze(t)
	root := fakeRoot(t, nil)
	for _, u := range Units() {
		t.Run(u, func(t *testing.T) {
			if out, err := verify(analyze, root, u, ""); err != nil {
				t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
			}
		})
	}
}

// TestUnitsVerifyCatchesMistakes: the check above fails on a unit systemd
// would only warn about, and on a program that is not installed.
func TestUnitsVerifyCatchesMistakes(t *testing.T) {
	analyze := needAnalyze(t)
	b, err := Files.ReadFile(Service)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "Restart=on-failure", "Restart=sometimes\nWatchdogSecs=60s", 1)
	root := fakeRoot(t, map[string]string{Service: bad})
	if out, err := verify(analyze, root, Service, ""); err == nil {
		t.Errorf("verify accepted a unit with a bad value and an unknown key")
	} else if !strings.Contains(out, "WatchdogSecs") {
		t.Errorf("verify output does not name the unknown key:\n%s", out)
	}
	root = fakeRoot(t, nil)
	if err := os.Remove(filepath.Join(root, Binary)); err != nil {
		t.Fatal(err)
	}
	if out, err := verify(analyze, root, Service, ""); err == nil {
		t.Errorf("verify accepted a unit whose program is missing")
	} else {
		t.Logf("as expected: %s", out)
	}
}

func TestSecurityScore(t *testing.T) {
	analyze := needAnalyze(t)
	root := fakeRoot(t, nil)
	score, word := exposure(t, analyze, root, Service)
	t.Logf("systemd-analyze security --offline=yes %s: %.1f %s", Service, score, word)
	if score > maxExposure {
		t.Errorf("%s: exposure %.1f %s, want at most %.1f", Service, score, word, maxExposure)
	}
	// docs/install.md states this figure: it must be the one systemd gives.
	readme, err := os.ReadFile("../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	if said := fmt.Sprintf("security --offline=yes\nscanwarden.service` rates it %.1f %s", score, word); !bytes.Contains(readme, []byte(said)) {
		t.Errorf("docs/install.md does not say %q", said)
	}
	// smbd must run as root with setuid/setgid and DAC override to be the
	// logged-on user; its score is reported, and bounded so it does not rot.
	score, word = exposure(t, analyze, root, SMBService)
	t.Logf("systemd-analyze security --offline=yes %s: %.1f %s", SMBService, score, word)
	if score > 5 {
		t.Errorf("%s: exposure %.1f %s, want at most 5", SMBService, score, word)
	}
}

// directives reads one unit's [Section] Key=Value lines (repeated keys kept).
func directives(t *testing.T, unit string) map[string][]string {
	t.Helper()
	b, err := Files.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	d := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, _ := strings.Cut(line, "=")
			d[section+"."+k] = append(d[section+"."+k], v)
		}
	}
	return d
}

func TestServiceDirectives(t *testing.T) {
	d := directives(t, Service)
	want := map[string]string{
		"Service.Type":                   "notify",
		"Service.ExecStart":              Binary + " serve --config " + ConfigFile,
		"Service.Restart":                "on-failure",
		"Service.User":                   User,
		"Service.Group":                  User,
		"Service.StateDirectory":         "scanwarden",
		"Service.ConfigurationDirectory": "scanwarden",
		"Service.LogsDirectory":          "scanwarden",
		"Service.LoadCredential":         "secret.key:" + KeyFile,
		"Service.CapabilityBoundingSet":  "CAP_NET_BIND_SERVICE",
		"Service.ProtectSystem":          "strict",
		"Service.ProtectHome":            "yes",
		"Service.PrivateTmp":             "yes",
		"Service.NoNewPrivileges":        "yes",
		"Install.WantedBy":               "multi-user.target",
	}
	for k, v := range want {
		if got := d[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s %s = %q, want %q", Service, k, got, v)
		}
	}
	for _, k := range []string{"Service.WatchdogSec", "Service.RestrictAddressFamilies", "Service.SystemCallFilter"} {
		if len(d[k]) == 0 {
			t.Errorf("%s has no %s", Service, k)
		}
	}
	// A restart of the daemon must not restart the share: only Wants=, never
	// BindsTo=/PartOf=/Requires= between the two.
	s := directives(t, SMBService)
	for _, k := range []string{"Unit.BindsTo", "Unit.PartOf", "Unit.Requires"} {
		if len(d[k]) > 0 || len(s[k]) > 0 {
			t.Errorf("%s ties the daemon and the share together", k)
		}
	}
	smbd := "/usr/sbin/smbd " + strings.Join(samba.Config{Dir: SmbdDir}.SmbdArgs(), " ")
	if got := s["Service.ExecStart"]; len(got) != 1 || got[0] != smbd {
		t.Errorf("%s ExecStart = %q, want %q (samba.Config.SmbdArgs)", SMBService, got, smbd)
	}
	if got := s["Service.StateDirectory"]; len(got) != 1 || "/var/lib/"+got[0] != SmbdDir {
		t.Errorf("%s StateDirectory = %q, want %s", SMBService, got, SmbdDir)
	}
	if got := s["Unit.ConditionPathExists"]; len(got) != 1 || got[0] != AllowFile {
		t.Errorf("%s ConditionPathExists = %q, want %s", SMBService, got, AllowFile)
	}
	// Root's step is the only thing that runs before smbd and at reload;
	// no Samba tool runs from the unit against any file.
	prepare := "+" + Binary + " receiver prepare --config " + ConfigFile
	if got := s["Service.ExecStartPre"]; len(got) != 1 || got[0] != prepare {
		t.Errorf("%s ExecStartPre = %q, want %q", SMBService, got, prepare)
	}
	if got := s["Service.ExecReload"]; len(got) != 2 || got[0] != prepare {
		t.Errorf("%s ExecReload = %q, want %q then the HUP", SMBService, got, prepare)
	}
	for _, k := range []string{"Service.ReadWritePaths"} {
		for _, v := range s[k] {
			for _, p := range strings.Fields(v) {
				if p != receiver.Inbox(ReceiverDir) {
					t.Errorf("%s %s %s: smbd may write only the inbox of the daemon's", SMBService, k, p)
				}
			}
		}
	}
	p := directives(t, "scanwarden-smbd-reload.path")
	if got := p["Path.PathChanged"]; len(got) != 1 || got[0] != AllowFile {
		t.Errorf("reload path watches %q, want %s", got, AllowFile)
	}
	if AllowFile != samba.AllowFile(ReceiverDir) {
		t.Errorf("AllowFile %s, the receiver writes %s", AllowFile, samba.AllowFile(ReceiverDir))
	}
}

// TestSysusersTmpfiles applies the snippets to an empty root with the real
// systemd-sysusers and systemd-tmpfiles and checks user, folders, modes.
func TestSysusersTmpfiles(t *testing.T) {
	sysusers, err1 := exec.LookPath("systemd-sysusers")
	tmpfiles, err2 := exec.LookPath("systemd-tmpfiles")
	if err1 != nil || err2 != nil {
		testlab.Missing(t, "systemd-sysusers/systemd-tmpfiles not installed (Debian package systemd): skipped")
	}
	if os.Geteuid() != 0 {
		testlab.Missing(t, "needs root to give the folders their owner")
	}
	root := t.TempDir()
	for _, f := range []string{"sysusers.d/scanwarden.conf", "tmpfiles.d/scanwarden.conf"} {
		b, err := Files.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "usr/lib", f), b, 0o644)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sysusers, "--root="+root).CombinedOutput(); err != nil {
		t.Fatalf("systemd-sysusers: %v\n%s", err, out)
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	var uid, gid int = -1, -1
	for _, line := range strings.Split(string(passwd), "\n") {
		f := strings.Split(line, ":")
		if len(f) == 7 && f[0] == User {
			uid, _ = strconv.Atoi(f[2])
			gid, _ = strconv.Atoi(f[3])
			if f[5] != StateDir || f[6] != "/usr/sbin/nologin" {
				t.Errorf("passwd line %q: want home %s and shell /usr/sbin/nologin", line, StateDir)
			}
			if uid <= 0 || uid >= 1000 {
				t.Errorf("uid %d is not a system uid", uid)
			}
		}
	}
	if uid < 0 {
		t.Fatalf("no %s in passwd:\n%s", User, passwd)
	}
	if out, err := exec.Command(tmpfiles, "--root="+root, "--create").CombinedOutput(); err != nil {
		t.Fatalf("systemd-tmpfiles: %v\n%s", err, out)
	}
	for _, c := range []struct {
		path     string
		mode     fs.FileMode
		uid, gid int
	}{
		{StateDir, 0o700, uid, gid},
		{ReceiverDir, 0o750, uid, gid},
		{LogsDir, 0o750, uid, gid},
		{filepath.Dir(ConfigFile), 0o755, 0, 0},
		{SmbdDir, 0o755, 0, 0},
	} {
		st, err := os.Stat(filepath.Join(root, c.path))
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if st.Mode().Perm() != c.mode || !st.IsDir() {
			t.Errorf("%s: mode %v, want dir %04o", c.path, st.Mode(), c.mode)
		}
		if u, g := owner(st); u != c.uid || g != c.gid {
			t.Errorf("%s: owner %d:%d, want %d:%d", c.path, u, g, c.uid, c.gid)
		}
	}
}
