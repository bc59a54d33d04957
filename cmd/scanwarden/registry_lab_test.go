package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestRegistryLab imports an address book that points at the lab, replays
// its destinations as stored — the device's workstation name included — and
// finds a wrong stored password (lab user regwrong: one wrong logon, then a
// right one after the fixed export is re-imported).
func TestRegistryLab(t *testing.T) {
	lab := testlab.Require(t)
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	const wrong = "Wrong-Stored-Pw-1"
	book := func(regwrongPw string) string {
		cs := []registry.Contact{
			{ID: "1", DisplayName: "Alice", Host: lab.DCHost, Port: 445, Share: "scans", User: lab.Domain + `\alice`, Password: scanwarden.NewSecret(lab.Password)},
			{ID: "2", DisplayName: "Reg wrong", Host: lab.DCHost, Port: 445, Share: "scans", User: "regwrong@" + lab.DNSDomain, Password: scanwarden.NewSecret(regwrongPw)},
			{ID: "4", DisplayName: "Alice UPN", Host: lab.DCHost, Share: "scans", User: "alice@" + lab.DNSDomain, Password: scanwarden.NewSecret(lab.Password)},
			{ID: "5", DisplayName: "Alice bare", Host: strings.ToUpper(lab.DCHost), Port: 445, Share: "SCANS", User: "alice", Password: scanwarden.NewSecret(lab.Password)},
			{ID: "6", DisplayName: "Guest share", Host: lab.GuestIP, Port: 445, Share: "scans"}, // empty login and password, imported as such
			{ID: "3", DisplayName: "Ivan only MFP01", Host: lab.DCHost, Port: 445, Share: "scans", User: lab.Domain + `\ivan`, Password: scanwarden.NewSecret(lab.Password)},
		}
		var b bytes.Buffer
		if err := registry.WriteAddressBook(&b, cs); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "book.xml")
		os.WriteFile(p, b.Bytes(), 0o600)
		return p
	}
	var outs []string
	cli := func(want int, args ...string) result {
		t.Helper()
		r := runCLI(t, nil, "", args...)
		outs = append(outs, r.stdout, r.stderr)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		return r
	}
	// The device sends MFP01: ivan may log on only from there.
	cli(exitOK, "device", "add", "mfp01", "--sys-name", "MFP01", "--data-dir", data)
	cli(exitOK, "import", "addressbook", book(wrong), "--device", "mfp01", "--data-dir", data)

	verdict := func(r result) map[string]any {
		t.Helper()
		var rep struct {
			Target  map[string]any `json:"target"`
			Verdict map[string]any `json:"verdict"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		if rep.Target["workstation"] != "MFP01" {
			t.Errorf("replayed as workstation %v, want the device's MFP01", rep.Target["workstation"])
		}
		return rep.Verdict
	}
	if v := verdict(cli(exitOK, "check", "--destination", "alice", "--json", "--data-dir", data)); v["cause"] != "ok" {
		t.Errorf("alice: %v", v)
	}
	if v := verdict(cli(exitOK, "check", "--destination", "ivan-only-mfp01", "--json", "--data-dir", data, "--no-write")); v["cause"] != "ok" {
		t.Errorf("ivan from MFP01: %v", v)
	}
	for _, n := range []string{"alice-upn", "alice-bare"} {
		if v := verdict(cli(exitOK, "check", "--destination", n, "--json", "--data-dir", data, "--no-write")); v["cause"] != "ok" {
			t.Errorf("%s: %v", n, v)
		}
	}
	if v := verdict(cli(exitOK, "check", "--destination", "guest-share", "--json", "--data-dir", data, "--no-write")); v["cause"] != "ok" {
		t.Errorf("guest share: %v", v)
	}
	// One wrong logon at most for regwrong.
	if v := verdict(cli(exitFinding, "check", "--destination", "reg-wrong", "--json", "--max-failures", "1", "--data-dir", data)); v["cause"] != "bad-credentials" {
		t.Errorf("wrong stored password: %v", v)
	}
	show := cli(exitOK, "destination", "show", "reg-wrong", "--json", "--data-dir", data)
	var sh struct {
		LastCheck  map[string]any  `json:"last_check"`
		LastReport json.RawMessage `json:"last_report"`
	}
	json.Unmarshal([]byte(show.stdout), &sh)
	if sh.LastCheck["cause"] != "bad-credentials" || len(sh.LastReport) == 0 {
		t.Errorf("the report is not kept as the latest: %s", show.stdout)
	}
	human := cli(exitOK, "destination", "show", "reg-wrong", "--data-dir", data)
	if !strings.Contains(human.stdout, "verdict: bad-credentials") {
		t.Errorf("show: %s", human.stdout)
	}

	// The admin fixes the password on the MFP and exports again.
	cli(exitOK, "import", "addressbook", book(lab.Password), "--device", "mfp01", "--data-dir", data)
	if v := verdict(cli(exitOK, "check", "--destination", "reg-wrong", "--json", "--data-dir", data, "--no-write")); v["cause"] != "ok" {
		t.Errorf("fixed password: %v", v)
	}
	human = cli(exitOK, "check", "--destination", "alice", "--data-dir", data, "--no-write")
	if !strings.Contains(human.stdout, "verdict: ok") || !strings.Contains(human.stdout, "workstation MFP01") {
		t.Errorf("human check: %s", human.stdout)
	}
	list := cli(exitOK, "destination", "list", "--data-dir", data)
	if !strings.Contains(list.stdout, "ok ") {
		t.Errorf("list: %s", list.stdout)
	}
	grepFiles(t, data, outs, []string{lab.Password, wrong})
}
