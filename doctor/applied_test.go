package doctor

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/receiver/samba"
)

// TestAllowApplied: in the installed layout (external_smbd), doctor compares
// the daemon's allowlist (data_dir/receiver/smbd-allow) with root's applied
// copy (smbd_dir/allow), in temp folders: agree, differ (whom smbd refuses,
// whom it still admits, and the fix), refused (root's reason, a refusal older
// than the daemon's list not named), root's copy missing, the daemon's list
// not written yet; a list written less than the daemon's grace ago
// (samba.DefaultHandoverTimes.Grace, 35 s) and not applied is pending (skip,
// naming how long ago), one refused is a failure at once, and past the grace
// a list not applied fails; outside the installed layout the check does not
// apply, and with the share off it is not made.
func TestAllowApplied(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "mfp.pw")
	os.WriteFile(pw, []byte("Mfp.Doctor-25\n"), 0o600)
	smbdDir := t.TempDir()
	rx := fmt.Sprintf("[receiver]\nenabled = true\nlisten = \"127.0.0.1:44592\"\npassword_file = %q\n", pw)
	conf, data := box(t, rx+fmt.Sprintf("external_smbd = true\nsmbd_dir = %q\n", smbdDir))
	now := time.Now
	doctor := func() Report {
		return run(t, Options{ConfigFile: conf, SMBUnit: filepath.Join(t.TempDir(), "none.service"), Timeout: 300 * time.Millisecond,
			Now: func() time.Time { return now() }})
	}
	const id = "receiver.allow.applied"
	want(t, doctor(), id, Skip, "the daemon has handed root no allowlist yet", "systemctl start scanwarden")

	list := func(s ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, p := range s {
			out = append(out, netip.MustParsePrefix(p))
		}
		return out
	}
	rxDir := filepath.Join(data, "receiver")
	os.MkdirAll(rxDir, 0o700)
	daemonFile := samba.AllowFile(rxDir)
	if _, err := samba.WriteAllowFile(daemonFile, list("10.0.0.5/32", "10.0.0.6/32")); err != nil {
		t.Fatal(err)
	}
	root := func(s ...string) {
		t.Helper()
		if err := os.WriteFile(samba.AppliedFile(smbdDir), samba.FormatAllow(list(s...)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lists := "The daemon's list (" + daemonFile + "): 10.0.0.5/32 10.0.0.6/32; root's (" + samba.AppliedFile(smbdDir) + "): "

	// just written, root has not applied it yet (its path unit reloads
	// smbd in a second or two): pending, up to the daemon's grace
	grace := samba.DefaultHandoverTimes.Grace()
	fi, err := os.Stat(daemonFile)
	if err != nil {
		t.Fatal(err)
	}
	written := fi.ModTime()
	for _, c := range []struct {
		ago    time.Duration
		st     Status
		detail string
	}{
		{time.Second, Skip, "pending: the daemon wrote its allowlist 1s ago and root has not applied it yet; root is given 35s from the write, as the daemon gives it before it raises its fault. " + lists + "unreadable"},
		{grace - time.Second, Skip, "pending: the daemon wrote its allowlist 34s ago"},
		{grace, Fail, "root has not applied the allowlist the daemon last wrote 35s ago: root's list cannot be read"},
	} {
		now = func() time.Time { return written.Add(c.ago) }
		want(t, doctor(), id, c.st, c.detail, "")
	}
	now = time.Now
	root("10.0.0.5/32") // an older list of root's: .6 not yet taken
	want(t, doctor(), id, Skip, "pending: the daemon wrote its allowlist", "")
	// root refused it: no grace, root has said no
	reason := "10.0.0.6/32 is a network that neither [receiver] allow nor this box's networks contain; the file is refused"
	refused := samba.RefusedFile(smbdDir)
	os.WriteFile(refused, []byte(reason+"\n"), 0o644)
	want(t, doctor(), id, Fail, "root refused the daemon's list ("+reason+"), so smbd refuses 10.0.0.6/32", "systemctl restart scanwarden-smbd-reload.path")
	os.Remove(refused)
	os.Remove(samba.AppliedFile(smbdDir))

	// past the grace: a failure
	past := time.Now().Add(-grace - time.Second)
	if err := os.Chtimes(daemonFile, past, past); err != nil {
		t.Fatal(err)
	}
	want(t, doctor(), id, Fail, "root's list cannot be read", "systemctl restart scanwarden-smbd-reload.path")

	root("10.0.0.6/32", "10.0.0.5/32")
	want(t, doctor(), id, OK, "root applied the daemon's allowlist. "+lists+"10.0.0.6/32 10.0.0.5/32", "")

	root("10.0.0.5/32", "10.0.0.9/32") // .6 registered, .9 removed: root lags
	rep := doctor()
	for _, w := range []string{
		"smbd refuses 10.0.0.6/32, which the daemon admits",
		"smbd still admits 10.0.0.9/32, which the daemon no longer does",
		lists + "10.0.0.5/32 10.0.0.9/32",
	} {
		want(t, rep, id, Fail, w, "journalctl -u scanwarden-smbd.service")
	}
	want(t, rep, id, Fail, "", "systemctl restart scanwarden-smbd-reload.path")
	if c := find(t, rep, id); strings.Contains(c.Detail, "refused the daemon's list") {
		t.Errorf("%s names a refusal root did not make: %s", id, c.Detail)
	}

	// root refused the list: its reason, once written since the daemon's list
	os.WriteFile(refused, []byte(reason+"\n"), 0o644)
	want(t, doctor(), id, Fail, "root refused the daemon's list ("+reason+"), so smbd refuses 10.0.0.6/32", "systemctl restart scanwarden-smbd-reload.path")
	past = time.Now().Add(-time.Hour)
	os.Chtimes(refused, past, past)
	if c := find(t, doctor(), id); c.Status != Fail || strings.Contains(c.Detail, reason) {
		t.Errorf("%s with a refusal older than the daemon's list: %s %s, want fail without it", id, c.Status, c.Detail)
	}

	// not the installed layout: root applies no list
	conf, _ = box(t, rx)
	want(t, doctor(), id, Skip, "does not apply", "")
	conf, _ = box(t, "")
	for _, c := range doctor().Checks {
		if c.ID == id {
			t.Errorf("share off: %s %s %s, want no such check", c.ID, c.Status, c.Detail)
		}
	}
}
