package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestReceiverStatusProbesShare: `receiver status` logs on to the running
// share as the MFP account (a real smbd started by `receiver run`): ok and
// exit 0 with the password smbd holds; another password in the file is the
// MFP logon refused (exit 1, cause and fix); without a password it shows the
// running receiver's own probe; with smbd stopped, nothing listening.
func TestReceiverStatusProbesShare(t *testing.T) {
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	if _, err := os.Stat("/usr/sbin/smbd"); err != nil {
		testlab.Missing(t, "samba not installed")
	}
	t.Setenv("SCANWARDEN_RECEIVER_PASSWORD", "")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	mfp := filepath.Join(dir, "mfp.pw")
	os.WriteFile(mfp, []byte("Mfp.Status-25\n"), 0o600)
	wrong := filepath.Join(dir, "wrong.pw")
	os.WriteFile(wrong, []byte("Not.What-Smbd-Has-1\n"), 0o600)
	_, stop := startReceiver(t, "--data-dir", dir, "--account", "swmfp", "--password-file", mfp, "--allow", "10.9.9.0/24")
	type shareCheck struct {
		Cause, Detail, Fix string
	}
	status := func(args ...string) (result, shareCheck) {
		t.Helper()
		r := runCLI(t, nil, "", append([]string{"receiver", "status", "--data-dir", dir}, args...)...)
		var st struct {
			ShareCheck *shareCheck `json:"share_check"`
		}
		if json.Unmarshal([]byte(r.stdout), &st) != nil || st.ShareCheck == nil {
			return r, shareCheck{}
		}
		return r, *st.ShareCheck
	}
	var r result
	var sc shareCheck
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, sc = status("--json", "--password-file", mfp); r.code == exitOK && sc.Cause == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a working share: %d %s %s", r.code, r.stdout, r.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := runCLI(t, nil, "", "receiver", "status", "--data-dir", dir, "--password-file", mfp); !strings.Contains(r.stdout, "share:     ok, the MFP account swmfp logged on and connected") {
		t.Errorf("status text: %s", r.stdout)
	}
	r, sc = status("--json", "--password-file", wrong)
	if r.code != exitFinding || sc.Cause != "mfp-logon-refused" || !strings.Contains(sc.Fix, "restart the receiver") {
		t.Errorf("another password: exit %d %+v", r.code, sc)
	}
	r = runCLI(t, nil, "", "receiver", "status", "--data-dir", dir, "--password-file", wrong)
	if !strings.Contains(r.stdout, "REFUSES THE MFPs (mfp-logon-refused, by this command)") || !strings.Contains(r.stdout, "fix: ") {
		t.Errorf("status text: %s", r.stdout)
	}
	if _, err := os.Stat("/etc/scanwarden/scanwarden.toml"); err != nil { // no installed config to take the password from
		r = runCLI(t, nil, "", "receiver", "status", "--data-dir", dir)
		if r.code != exitOK || !strings.Contains(r.stdout, "by the running receiver") || !strings.Contains(r.stdout, "no MFP password given") {
			t.Errorf("without a password: %d %s", r.code, r.stdout)
		}
	}
	stop()
	r, sc = status("--json", "--password-file", mfp)
	if r.code != exitFinding || sc.Cause != "smbd-not-listening" {
		t.Errorf("smbd stopped: exit %d %+v %s", r.code, sc, r.stdout)
	}
}
