package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestAttackPrepareRefusesWideAllow: the daemon's allowlist names the MFPs
// (single addresses), the networks of [receiver] allow (root's own config)
// and, with neither, this box's networks. Root took any network the file
// named, so a daemon taken over could open root's smbd to the whole
// Internet (0.0.0.0/0, ::/0). A network that is neither inside [receiver]
// allow nor one of the box's networks (as root reads them) now refuses the
// file, naming it; the last good smb.conf stays.
func TestAttackPrepareRefusesWideAllow(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "the root step needs root")
	}
	if _, err := exec.LookPath("pdbedit"); err != nil {
		testlab.Missing(t, "samba not installed")
	}
	if err := samba.FullAuditModule(context.Background(), ""); err != nil {
		testlab.Missing(t, err.Error())
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	smbdDir := filepath.Join(dir, "smbd")
	pwFile := filepath.Join(dir, "mfp.pw")
	os.WriteFile(pwFile, []byte("Mfp.Accounts-25\n"), 0o600)
	conf := filepath.Join(dir, "on.toml")
	os.WriteFile(conf, []byte("data_dir = \""+data+"\"\n[receiver]\nenabled = true\nlisten = \"127.0.0.1:44592\"\naccount = \"swmfp\"\n"+
		"external_smbd = true\nallow = [\"192.168.10.0/24\"]\nsmbd_dir = \""+smbdDir+"\"\npassword_file = \""+pwFile+"\"\n"), 0o644)
	rx := filepath.Join(data, "receiver")
	os.MkdirAll(rx, 0o700)
	allow := samba.AllowFile(rx)
	smbConf := filepath.Join(smbdDir, "smb.conf")
	prepare := func(list string) (int, string, []byte) {
		t.Helper()
		os.WriteFile(allow, []byte(list), 0o644)
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"receiver", "prepare", "--config", conf, "--user", "root"}, strings.NewReader(""), &out, &errb)
		b, _ := os.ReadFile(smbConf)
		return code, out.String() + errb.String(), b
	}
	// taken: hosts, the configured network and a part of it, the box's loopback network
	for _, list := range []string{"10.1.2.3\n192.168.10.0/24\n", "192.168.10.128/25\n203.0.113.7\n", "127.0.0.0/8\n"} {
		if code, out, _ := prepare(list); code != exitOK || strings.Contains(out, "refused") {
			t.Fatalf("%q: exit %d, %s", list, code, out)
		}
	}
	_, _, good := prepare("10.1.2.3\n192.168.10.0/24\n")
	for _, wide := range []string{"0.0.0.0/0", "::/0", "10.0.0.0/8", "192.168.0.0/16", "2001:db8::/32"} {
		code, out, now := prepare("10.1.2.3\n" + wide + "\n")
		if !bytes.Equal(now, good) {
			t.Errorf("%s: smb.conf changed:\n%s", wide, now)
		}
		if code != exitOK || !strings.Contains(out, wide) || !strings.Contains(out, "refused") {
			t.Errorf("%s: exit %d, want 0 with a log line naming it as refused:\n%s", wide, code, out)
		}
	}
}
