package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestReceiverPrepareConfig: `receiver prepare --config` (what
// scanwarden-smbd.service runs as root before smbd starts and at reload)
// takes data_dir and [receiver] from root's config; without the receiver
// enabled it has nothing to do; with it, it renders smb.conf in smbd_dir
// from the daemon's allowlist and refuses a list that is not addresses.
func TestReceiverPrepareConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	smbdDir := filepath.Join(dir, "smbd")
	pwFile := filepath.Join(dir, "mfp.pw")
	os.WriteFile(pwFile, []byte("Mfp.Accounts-25\n"), 0o600)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("data_dir = \""+data+"\"\n"+text), 0o644)
		return p
	}
	prepare := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"receiver", "prepare"}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}

	off := write("off.toml", "")
	if code, out, errs := prepare("--config", off); code != exitOK || !strings.Contains(out, "nothing to prepare") {
		t.Errorf("receiver off: exit %d %q %q", code, out, errs)
	}
	bad := write("bad.toml", "[receiver]\nenabled = true\n")
	if code, _, errs := prepare("--config", bad); code != exitUsage || !strings.Contains(errs, "receiver.password_file") {
		t.Errorf("receiver without password_file: exit %d %q", code, errs)
	}
	if os.Geteuid() != 0 {
		testlab.Missing(t, "the root step needs root")
	}
	if _, err := exec.LookPath("pdbedit"); err != nil {
		testlab.Missing(t, "samba not installed")
	}
	if err := samba.FullAuditModule(context.Background(), ""); err != nil {
		testlab.Missing(t, err.Error())
	}
	on := write("on.toml", "[receiver]\nenabled = true\nlisten = \"127.0.0.1:44591\"\naccount = \"swmfp\"\nexternal_smbd = true\nallow = [\"192.168.10.0/24\"]\n"+
		"smbd_dir = \""+smbdDir+"\"\npassword_file = \""+pwFile+"\"\n")
	if code, _, errs := prepare("--config", on, "--user", "root"); code != exitUsage || !strings.Contains(errs, "smbd-allow") {
		t.Errorf("before the daemon wrote its allowlist: exit %d %q", code, errs)
	}
	// the daemon's side: its allowlist (here root's own file, --user root)
	rx := filepath.Join(data, "receiver")
	os.MkdirAll(rx, 0o700)
	allow := samba.AllowFile(rx)
	os.WriteFile(allow, []byte("192.168.10.0/24\n10.1.2.3\n"), 0o644)
	code, out, errs := prepare("--config", on, "--user", "root")
	conf := filepath.Join(smbdDir, "smb.conf")
	if code != exitOK || !strings.Contains(out, conf+" written") || !strings.Contains(out, "192.168.10.0/24 10.1.2.3/32") {
		t.Fatalf("receiver prepare --config: exit %d %q %q", code, out, errs)
	}
	good, _ := os.ReadFile(conf)
	if !strings.Contains(string(good), "hosts allow = 192.168.10.0/24 10.1.2.3/32") {
		t.Errorf("smb.conf:\n%s", good)
	}
	list, err := exec.Command("pdbedit", "-s", conf, "-L").CombinedOutput()
	if err != nil || !strings.Contains(string(list), "swmfp:") {
		t.Errorf("pdbedit -L: %v\n%s", err, list)
	}
	os.WriteFile(allow, []byte("10.1.2.3\nroot preexec = /bin/true\n"), 0o644)
	code, out, errs = prepare("--config", on, "--user", "root")
	if code != exitOK || !strings.Contains(errs, `line 2: \"root preexec = /bin/true\" is not an address`) {
		t.Errorf("a refused allowlist: exit %d %q %q", code, out, errs)
	}
	if now, _ := os.ReadFile(conf); !bytes.Equal(now, good) {
		t.Errorf("a refused allowlist changed smb.conf:\n%s", now)
	}
	// what the daemon reads: root's list (the last good one) and why its
	// own was refused; both gone stale once a list is taken
	if got, err := samba.ReadApplied(smbdDir); err != nil || fmt.Sprint(got) != "[192.168.10.0/24 10.1.2.3/32]" {
		t.Errorf("root's applied list after a refusal: %v %v", got, err)
	}
	why, _ := os.ReadFile(samba.RefusedFile(smbdDir))
	if fi, err := os.Stat(samba.RefusedFile(smbdDir)); err != nil || fi.Mode().Perm() != 0o644 || !strings.Contains(string(why), `line 2: "root preexec = /bin/true" is not an address`) {
		t.Errorf("why the list was refused, for the daemon: %q (%v)", why, err)
	}
	os.WriteFile(allow, []byte("10.1.2.3\n"), 0o644)
	if code, out, errs = prepare("--config", on, "--user", "root"); code != exitOK {
		t.Fatalf("a good list after a refused one: exit %d %q %q", code, out, errs)
	}
	if got, err := samba.ReadApplied(smbdDir); err != nil || fmt.Sprint(got) != "[10.1.2.3/32]" {
		t.Errorf("root's applied list: %v %v", got, err)
	}
	if _, err := os.Stat(samba.RefusedFile(smbdDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refusal is kept once a list was taken: %v", err)
	}
}
