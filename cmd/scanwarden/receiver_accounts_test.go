package main

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/receiver"
)

// TestReceiverAccountsConfig: `receiver accounts --config` (what
// scanwarden-smbd.service runs as root before smbd starts) takes data_dir and
// [receiver] from the daemon's config; without the receiver enabled it has
// nothing to do and succeeds.
func TestReceiverAccountsConfig(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pwFile := filepath.Join(dir, "mfp.pw")
	os.WriteFile(pwFile, []byte("Mfp.Accounts-25\n"), 0o600)
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("data_dir = \""+data+"\"\n"+text), 0o644)
		return p
	}
	accounts := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"receiver", "accounts"}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}

	off := write("off.toml", "")
	if code, out, errs := accounts("--config", off); code != exitOK || !strings.Contains(out, "receiver not enabled") {
		t.Errorf("receiver off: exit %d %q %q", code, out, errs)
	}
	bad := write("bad.toml", "[receiver]\nenabled = true\n")
	if code, _, errs := accounts("--config", bad); code != exitUsage || !strings.Contains(errs, "receiver.password_file") {
		t.Errorf("receiver without password_file: exit %d %q", code, errs)
	}
	on := write("on.toml", "[receiver]\nenabled = true\nlisten = \"127.0.0.1:44591\"\naccount = \"swmfp\"\nexternal_smbd = true\npassword_file = \""+pwFile+"\"\n")
	if code, _, errs := accounts("--config", on); code != exitUsage || !strings.Contains(errs, "no smb.conf yet") {
		t.Errorf("before the daemon wrote smb.conf: exit %d %q", code, errs)
	}

	if os.Geteuid() != 0 {
		t.Skip("setting the account in smbd's passdb needs root")
	}
	pdbedit, err := exec.LookPath("pdbedit")
	if err != nil {
		t.Skip("samba not installed")
	}
	// the daemon's side: the receiver writes and validates smb.conf
	s, err := receiver.NewSamba(receiver.SambaConfig{Dir: filepath.Join(data, "receiver", "smbd"),
		Inbox: receiver.Inbox(filepath.Join(data, "receiver")), Listen: netip.MustParseAddr("127.0.0.1"), Port: 44591,
		Share: "scans", ForceUser: "root"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteConfig(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, out, errs := accounts("--config", on)
	if code != exitOK || !strings.Contains(out, "account swmfp set in "+s.ConfPath()) {
		t.Fatalf("receiver accounts --config: exit %d %q %q", code, out, errs)
	}
	list, err := exec.Command(pdbedit, "-s", s.ConfPath(), "-L").CombinedOutput()
	if err != nil || !strings.Contains(string(list), "swmfp:") {
		t.Errorf("pdbedit -L: %v\n%s", err, list)
	}
}
