package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/testlab"
)

// `receiver deliver --config` reads the daemon's config: a file that is
// not there or not valid is a usage error naming it (or its field); a good
// one's data_dir is the store used, and its [ad] is what the deliveries
// log on with (here one whose CA file is missing: said on stderr, and the
// deliveries go without it).
func TestReceiverDeliverConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SCANWARDEN_DATA_DIR", filepath.Join(dir, "not-this-one"))
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	adPw := write("ad.pw", "x\n")
	data := filepath.Join(dir, "data")
	for _, tc := range []struct {
		name, file, want string
	}{
		{"missing", filepath.Join(dir, "nosuch.toml"), "nosuch.toml"},
		{"bad ad url", write("bad.toml", "data_dir = \""+data+"\"\n[ad]\nurl = \"http://dc1\"\nbind_user = \"svc\"\npassword_file = \""+adPw+"\"\n"), "ad.url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, nil, "", "receiver", "deliver", "--config", tc.file)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d naming %s", r.code, r.stderr, exitUsage, tc.want)
			}
		})
	}
	cfg := write("good.toml", "data_dir = \""+data+"\"\n[checks]\nmax_failures = 1\n[ad]\nurl = \"ldaps://dc1.kyolab.test\"\nbind_user = \"svc\"\npassword_file = \""+adPw+"\"\nca = \""+filepath.Join(dir, "nosuch-ca.pem")+"\"\n")
	r := runCLI(t, nil, "", "receiver", "deliver", "--config", cfg)
	if r.code != exitOK || !strings.Contains(r.stdout, "delivered 0 scan(s)") {
		t.Fatalf("deliver --config: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "[ad] not used by deliveries") || !strings.Contains(r.stderr, "nosuch-ca.pem") {
		t.Errorf("stderr does not say that [ad] (its CA file) is not used: %q", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(data, store.DefaultFile)); err != nil {
		t.Errorf("the config's data_dir holds no store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "not-this-one")); err == nil {
		t.Error("the store was opened in $SCANWARDEN_DATA_DIR, not the config's data_dir")
	}
}

// ledgerCounts reports whether the store's ledger holds a logon counted
// under account key; it leaves nothing behind.
func ledgerCounts(t *testing.T, dir, key string) bool {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenUnlocked(ctx, dir, "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	id, refused, err := st.Ledger().Reserve(ctx, smbclient.Attempt{Account: key, Form: "probe", Typed: "probe", At: now}, now.Add(-time.Hour), 1)
	if err != nil {
		t.Fatal(err)
	}
	if id != 0 {
		st.Ledger().Resolve(ctx, id, smbclient.Outcome{Kind: smbclient.Cancelled})
	}
	return refused != nil
}

// TestLabReceiverConfigAD: a destination stores the UPN s.cliN@ of the
// account swcliN with a wrong password. `receiver run` without a config
// (no [ad]) holds a scan and fails to deliver it: the failure counts under
// the UPN's prefix, all it can know. `receiver deliver --config` with the
// daemon's [ad] then counts its failure under the directory's account,
// kyolab\swcliN — the key serve's checks and deliveries use — and spends
// the config's budget: with max_failures = 1 the next deliver, with the
// password retyped wrong again, sends nothing.
func TestLabReceiverConfigAD(t *testing.T) {
	lab := testlab.Require(t)
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	if _, err := os.Stat("/usr/sbin/smbd"); err != nil {
		testlab.Missing(t, "samba not installed (testlab/deps)")
	}
	n := time.Now().UnixNano() % 1e6
	sam, upn := fmt.Sprintf("swcli%d", n), fmt.Sprintf("s.cli%d@%s", n, lab.DNSDomain)
	lab.AddUser(t, sam, upn)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	t.Setenv("SCANWARDEN_DATA_DIR", dir)
	pw := filepath.Join(dir, "wrong.pw")
	os.WriteFile(pw, []byte("Wrong.Cli-25\n"), 0o600)
	if r := runCLI(t, nil, "", "destination", "add", "front-desk", "//"+lab.DCHost+"/scans", "--user", upn, "--password-file", pw); r.code != exitOK {
		t.Fatalf("destination add: %d %s", r.code, r.stderr)
	}
	mfp := filepath.Join(dir, "mfp.pw")
	os.WriteFile(mfp, []byte("Mfp.Cli-25\n"), 0o600)
	port, stop := startReceiver(t, "--account", "swmfp", "--password-file", mfp, "--quiet", "1s", "--allow", "127.0.0.1")
	src := filepath.Join(dir, "scan.pdf")
	os.WriteFile(src, []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"), 0o600)
	putScan(t, port, "swmfp%Mfp.Cli-25", "front-desk", src)
	var rows []map[string]any
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		rows = nil
		json.Unmarshal([]byte(runCLI(t, nil, "", "receiver", "list", "--json").stdout), &rows)
		if len(rows) == 1 && rows[0]["error"] != "" {
			break
		}
	}
	stop()
	if len(rows) != 1 || rows[0]["error"] == "" || rows[0]["state"] == "delivered" {
		t.Fatalf("the scan's first delivery did not fail: %+v", rows)
	}
	samKey, upnKey := smbclient.AccountKey(lab.Domain, sam), smbclient.AccountKey(lab.Domain, strings.Split(upn, "@")[0])
	if !ledgerCounts(t, dir, upnKey) || ledgerCounts(t, dir, samKey) {
		t.Fatalf("receiver run without a config: the failure is not counted under %s alone", upnKey)
	}

	adPw := filepath.Join(dir, "ad.pw")
	os.WriteFile(adPw, []byte(lab.Password+"\n"), 0o600)
	cfg := filepath.Join(dir, "scanwarden.toml")
	os.WriteFile(cfg, []byte("data_dir = \""+dir+"\"\n[checks]\nmax_failures = 1\n[ad]\nurl = \"ldaps://"+lab.DCHost+"\"\nbind_user = \"ldapreader@"+
		lab.DNSDomain+"\"\npassword_file = \""+adPw+"\"\nca = \""+lab.CA+"\"\n"), 0o600)
	r := runCLI(t, nil, "", "receiver", "deliver", "--config", cfg)
	if r.code != exitFinding {
		t.Fatalf("deliver --config: exit %d, want %d (not delivered): %s %s", r.code, exitFinding, r.stdout, r.stderr)
	}
	if !ledgerCounts(t, dir, samKey) {
		t.Fatalf("deliver --config with [ad]: the failure is not counted under the account %s (%s)", samKey, r.stderr)
	}
	// The MFP's password retyped, wrong again: a new form, which the
	// config's budget (1) no longer allows (the default, 2, would).
	os.WriteFile(pw, []byte("Wrong.Cli-26\n"), 0o600)
	if r := runCLI(t, nil, "", "destination", "add", "front-desk", "//"+lab.DCHost+"/scans", "--user", upn, "--password-file", pw); r.code != exitOK {
		t.Fatalf("destination add: %d %s", r.code, r.stderr)
	}
	r = runCLI(t, nil, "", "receiver", "deliver", "--config", cfg)
	rows = nil
	json.Unmarshal([]byte(runCLI(t, nil, "", "receiver", "list", "--json").stdout), &rows)
	if r.code != exitFinding || len(rows) != 1 || !strings.Contains(fmt.Sprint(rows[0]["error"]), "failure budget (1 per") {
		t.Fatalf("a second deliver, another wrong password, max_failures = 1: exit %d, %+v; want it kept back by the budget", r.code, rows)
	}
	t.Logf("kept back: %s", rows[0]["error"])
}
