package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/registry"
)

// fixturePasswords are the passwords in registry/testdata/addressbook.xml.
var fixturePasswords = []string{"Scan-Alice-1", `Bob&<pw>"1`, "upn-Pw-4", "dot-Pw-5", "host-Pw-6", "swb333", "Pässwörd-3"}

func isolate(t *testing.T) {
	t.Helper()
	for _, v := range []string{"SCANWARDEN_DATA_DIR", "SCANWARDEN_STATE_DIR", "SCANWARDEN_KEY_FILE", "CREDENTIALS_DIRECTORY", "SCANWARDEN_PASSWORD"} {
		t.Setenv(v, "")
	}
}

// grepFiles fails when any file under dir, or any of outs, holds a secret.
func grepFiles(t *testing.T, dir string, outs []string, secrets []string) {
	t.Helper()
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the password %q in clear", p, s)
			}
		}
		return nil
	})
	for i, o := range outs {
		for _, s := range secrets {
			if strings.Contains(o, s) {
				t.Errorf("output %d holds the password %q", i, s)
			}
		}
	}
}

func TestImportAddressBookCLI(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	book := filepath.Join("..", "..", "registry", "testdata", "addressbook.xml")
	var outs []string
	cli := func(want int, stdin string, args ...string) result {
		t.Helper()
		r := runCLI(t, nil, stdin, args...)
		outs = append(outs, r.stdout, r.stderr)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		return r
	}

	dry := cli(exitOK, "", "import", "addressbook", book, "--device", "mfp01", "--data-dir", data, "--dry-run")
	if !strings.Contains(dry.stdout, "would import 10") || !strings.Contains(dry.stdout, "nothing changed") {
		t.Errorf("dry run:\n%s", dry.stdout)
	}
	if r := cli(exitOK, "", "destination", "list", "--data-dir", data); !strings.Contains(r.stdout, "no destinations") {
		t.Errorf("the dry run stored something:\n%s", r.stdout)
	}

	js := cli(exitOK, "", "import", "addressbook", book, "--device", "mfp01", "--data-dir", data, "--json")
	var res struct {
		Device       string           `json:"device"`
		Destinations []map[string]any `json:"destinations"`
		Skipped      int              `json:"skipped"`
		Removed      []map[string]any `json:"removed"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, js.stdout)
	}
	if res.Device != "mfp01" || len(res.Destinations) != 10 || res.Skipped != 1 || len(res.Removed) != 0 {
		t.Fatalf("import: %+v", res)
	}
	var top map[string]any
	json.Unmarshal([]byte(js.stdout), &top)
	if len(top) != 4 {
		t.Errorf("import JSON has fields beyond the contract: %v", top)
	}
	for _, d := range res.Destinations {
		for _, k := range []string{"name", "host", "port", "share", "path", "user", "address_book_id", "display_name"} {
			if _, ok := d[k]; !ok {
				t.Errorf("destination %v lacks %s", d["name"], k)
			}
		}
		if len(d) != 8 {
			t.Errorf("destination has fields beyond the contract: %v", d)
		}
	}
	first := res.Destinations[0]
	if first["name"] != "alice-muller" || first["user"] != `KYOLAB\alice` || first["port"] != float64(445) || first["path"] != "alice" {
		t.Errorf("first destination %v", first)
	}

	// Re-import of a shorter export: same names, nothing duplicated, the gone contact reported.
	b, _ := os.ReadFile(book)
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `Id="1" `) || strings.Contains(l, "OneTouchKey") {
			kept = append(kept, l)
		}
	}
	short := filepath.Join(dir, "short.xml")
	os.WriteFile(short, []byte(strings.Join(kept, "\n")), 0o600)
	js2 := cli(exitOK, "", "import", "addressbook", short, "--device", "mfp01", "--data-dir", data, "--json")
	var res2 struct {
		Destinations []map[string]any `json:"destinations"`
		Removed      []map[string]any `json:"removed"`
	}
	json.Unmarshal([]byte(js2.stdout), &res2)
	if len(res2.Destinations) != 9 || len(res2.Removed) != 1 || res2.Removed[0]["name"] != "alice-muller" {
		t.Fatalf("re-import: %s", js2.stdout)
	}
	for i, d := range res2.Destinations {
		if d["name"] != res.Destinations[i+1]["name"] {
			t.Errorf("name changed on re-import: %v → %v", res.Destinations[i+1]["name"], d["name"])
		}
	}

	// A hostile file changes nothing and names the contact.
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte(strings.Replace(string(b), `SmbLoginPasswd="ED1CE55E30053916" SmbPort="445"/>`, `SmbLoginPasswd="ED1CE55E30053916" SmbPort="99999"/>`, 1)), 0o600)
	r := cli(exitUsage, "", "import", "addressbook", bad, "--device", "mfp01", "--data-dir", data)
	if !strings.Contains(r.stderr, `Id="6"`) || !strings.Contains(r.stderr, "line 11") || !strings.Contains(r.stderr, "nothing imported") {
		t.Errorf("bad file: %s", r.stderr)
	}
	list := cli(exitOK, "", "destination", "list", "--data-dir", data, "--json")
	var l struct {
		Destinations []map[string]any `json:"destinations"`
	}
	json.Unmarshal([]byte(list.stdout), &l)
	if len(l.Destinations) != 9 {
		t.Fatalf("after a refused import: %d destinations", len(l.Destinations))
	}
	for _, d := range l.Destinations {
		if d["folder"] != registry.Folder(d["name"].(string)) || d["device"] != "mfp01" || d["source"] != "imported" {
			t.Errorf("list entry %v", d)
		}
	}

	// By hand: device and destination, empty login name and password.
	pwf := filepath.Join(dir, "pw")
	os.WriteFile(pwf, []byte("Hand-Pw-9\n"), 0o600)
	comm := filepath.Join(dir, "comm")
	os.WriteFile(comm, []byte("Comm-Pw-8\n"), 0o600)
	cli(exitOK, "", "device", "add", "mfp02", "--address", "10.77.0.40:161", "--community-file", comm, "--sys-name", "MFP02", "--data-dir", data)
	cli(exitOK, "", "destination", "add", "hand", "//fs01:139/scans/x", "--user", `KYOLAB\h`, "--password-file", pwf, "--device", "mfp02", "--data-dir", data)
	cli(exitOK, "", "destination", "add", "guest", "//nas/public", "--user", "", "--no-password", "--data-dir", data)
	cli(exitUsage, "", "destination", "add", "bad name", "//nas/public", "--user", "u", "--no-password", "--data-dir", data)
	cli(exitUsage, "", "destination", "add", "nouser", "//nas/public", "--no-password", "--data-dir", data)
	cli(exitOK, "", "destination", "add", "krb", "//fs01/scans", "--user", "h@kyolab.test", "--password-file", pwf, "--auth", "kerberos", "--data-dir", data)
	if r := cli(exitUsage, "", "destination", "add", "krb2", "//fs01/scans", "--user", "h", "--no-password", "--auth", "ntlmv1", "--data-dir", data); !strings.Contains(r.stderr, "--auth") {
		t.Errorf("bad --auth: %s", r.stderr)
	}
	if r := cli(exitOK, "", "destination", "show", "krb", "--data-dir", data); !strings.Contains(r.stdout, "auth          kerberos") {
		t.Errorf("show krb: %s", r.stdout)
	}
	cli(exitOK, "", "destination", "remove", "krb", "--data-dir", data)
	cli(exitUsage, "", "destination", "add", "x", "//nas/public", "--user", "u", "--password-file", pwf, "--device", "nope", "--data-dir", data)
	show := cli(exitOK, "", "destination", "show", "hand", "--json", "--data-dir", data)
	var sh map[string]any
	json.Unmarshal([]byte(show.stdout), &sh)
	if sh["replay_workstation"] != "MFP02" || sh["port"] != float64(139) || sh["source"] != "added" || sh["auth"] != "ntlm" {
		t.Errorf("show: %s", show.stdout)
	}
	if r := cli(exitOK, "", "destination", "show", "guest", "--data-dir", data); !strings.Contains(r.stdout, "guest") || !strings.Contains(r.stdout, "never") {
		t.Errorf("show guest: %s", r.stdout)
	}
	// a new address needs the community again (TestAttackDeviceMoveNeedsCredentialsAgain); the sys-name stays
	cli(exitUsage, "", "device", "add", "mfp02", "--address", "10.77.0.42", "--data-dir", data)
	cli(exitOK, "", "device", "add", "mfp02", "--address", "10.77.0.42", "--community-file", comm, "--data-dir", data)
	devs := cli(exitOK, "", "device", "list", "--json", "--data-dir", data)
	if !strings.Contains(devs.stdout, `"snmp_credentials": true`) || !strings.Contains(devs.stdout, `"destinations": 9`) ||
		!strings.Contains(devs.stdout, `"address": "10.77.0.42"`) || !strings.Contains(devs.stdout, `"sys_name": "MFP02"`) {
		t.Errorf("device list: %s", devs.stdout)
	}
	cli(exitFinding, "", "device", "remove", "mfp02", "--data-dir", data)
	cli(exitOK, "", "destination", "remove", "hand", "--data-dir", data)
	cli(exitFinding, "", "destination", "remove", "hand", "--data-dir", data)
	cli(exitOK, "", "device", "remove", "mfp02", "--data-dir", data)

	// Export for the fallback, and back.
	fbpw := filepath.Join(dir, "fbpw")
	os.WriteFile(fbpw, []byte("Fallback-Pw-7\n"), 0o600)
	out := filepath.Join(dir, "fallback.xml")
	cli(exitOK, "", "export", "addressbook", "--device", "mfp01", "--fallback-host", "sw.kyolab.test", "--fallback-user", `SW\mfp`,
		"--fallback-password-file", fbpw, "--out", out, "--data-dir", data)
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v", st, err)
	}
	f, _ := os.Open(out)
	fb, err := registry.ReadAddressBook(f)
	f.Close()
	if err != nil || len(fb.Contacts) != 9 {
		t.Fatalf("export read back: %v", err)
	}
	for _, c := range fb.Contacts {
		if c.Host != "sw.kyolab.test" || c.Share != "scans" || c.Password.Reveal() != "Fallback-Pw-7" {
			t.Errorf("exported contact %+v", c)
		}
	}

	// --from keeps the rest of the original export (the short one, as imported last).
	out2 := filepath.Join(dir, "fallback-from.xml")
	cli(exitOK, "", "export", "addressbook", "--device", "mfp01", "--fallback-host", "sw.kyolab.test", "--fallback-user", `SW\mfp`,
		"--fallback-password-file", fbpw, "--from", short, "--out", out2, "--data-dir", data)
	b2, _ := os.ReadFile(out2)
	if !bytes.Contains(b2, []byte(`MailAddress="erin@kyolab.test"`)) || !bytes.Contains(b2, []byte(`\scans\known-answer"`)) {
		t.Errorf("export --from:\n%s", b2)
	}
	if r := cli(exitUsage, "", "export", "addressbook", "--device", "mfp01", "--fallback-host", "sw", "--fallback-user", "u",
		"--fallback-password-file", fbpw, "--from", book, "--out", out2, "--data-dir", data); !strings.Contains(r.stderr, `Id="1"`) {
		t.Errorf("--from with a contact not imported: %s", r.stderr)
	}

	// --bridged: only a bridged destination points at the fallback; with
	// --from the others stay as the device had them.
	if r := cli(exitUsage, "", "export", "addressbook", "--device", "mfp01", "--fallback-host", "sw.kyolab.test", "--fallback-user", `SW\mfp`,
		"--fallback-password-file", fbpw, "--bridged", "--out", out2, "--data-dir", data); !strings.Contains(r.stderr, "no bridged destination") {
		t.Errorf("--bridged with none bridged: %s", r.stderr)
	}
	if r := cli(exitOK, "", "destination", "bridge", "known-answer", "--data-dir", data); !strings.Contains(r.stdout, "known-answer: bridged") ||
		!strings.Contains(r.stdout, "export addressbook --device mfp01 --bridged") {
		t.Errorf("destination bridge: %s", r.stdout)
	}
	cli(exitFinding, "", "destination", "bridge", "nope", "--data-dir", data)
	if r := cli(exitOK, "", "destination", "show", "known-answer", "--json", "--data-dir", data); !strings.Contains(r.stdout, `"bridged_at"`) ||
		!strings.Contains(r.stdout, `"state": "failing"`) || !strings.Contains(r.stdout, "fallback share is not running") {
		t.Errorf("show of a bridged destination, no share running: %s", r.stdout)
	}
	out3 := filepath.Join(dir, "fallback-bridged.xml")
	cli(exitOK, "", "export", "addressbook", "--device", "mfp01", "--fallback-host", "sw.kyolab.test", "--fallback-user", `SW\mfp`,
		"--fallback-password-file", fbpw, "--bridged", "--from", short, "--out", out3, "--data-dir", data)
	f3, _ := os.Open(out3)
	bb, err := registry.ReadAddressBook(f3)
	f3.Close()
	if err != nil || len(bb.Contacts) < 2 {
		t.Fatalf("export --bridged read back: %v %d", err, len(bb.Contacts))
	}
	for _, c := range bb.Contacts {
		if fallback := c.Host == "sw.kyolab.test"; fallback != (c.Path == "known-answer") {
			t.Errorf("export --bridged: contact %s at %s\\%s\\%s", c.DisplayName, c.Host, c.Share, c.Path)
		}
	}
	if r := cli(exitOK, "", "destination", "bridge", "--off", "known-answer", "--data-dir", data); !strings.Contains(r.stdout, "not bridged") {
		t.Errorf("destination bridge --off: %s", r.stdout)
	}
	if r := cli(exitOK, "", "destination", "show", "known-answer", "--json", "--data-dir", data); strings.Contains(r.stdout, `"bridged_at"`) {
		t.Errorf("unbridged, yet: %s", r.stdout)
	}

	// Rotation keeps every secret readable.
	rot := cli(exitOK, "", "secrets", "rotate", "--data-dir", data)
	if !strings.Contains(rot.stdout, "re-encrypted 10 secrets") {
		t.Errorf("rotate: %s", rot.stdout)
	}
	cli(exitOK, "", "destination", "show", "known-answer", "--data-dir", data)

	// A missing key is a clear error, and no new key is made.
	os.Rename(filepath.Join(data, "secret.key"), filepath.Join(dir, "saved.key"))
	miss := cli(exitUsage, "", "destination", "list", "--data-dir", data)
	if !strings.Contains(miss.stderr, "is missing") || !strings.Contains(miss.stderr, "restore") {
		t.Errorf("missing key: %s", miss.stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "secret.key")); err == nil {
		t.Fatal("a new key was made over existing secrets")
	}
	cli(exitOK, "", "destination", "list", "--data-dir", data, "--key-file", filepath.Join(dir, "saved.key"))

	grepFiles(t, data, outs, append(fixturePasswords, "Hand-Pw-9", "Comm-Pw-8", "Fallback-Pw-7"))
}

func TestImportHostileNamesPrintedSafely(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "book.xml")
	os.WriteFile(f, []byte("<DeviceAddressBook_v5_2><Item Type=\"Contact\" Id=\"1\" DisplayName=\"evil\u202e\u0085&#x7f;\" SmbHostName=\"h\" SmbPath=\"\\s\" SmbLoginName=\"u\u202e\" SmbLoginPasswd=\"\"/></DeviceAddressBook_v5_2>"), 0o600)
	for _, args := range [][]string{
		{"import", "addressbook", f, "--device", "d", "--data-dir", dir},
		{"destination", "list", "--data-dir", dir},
		{"destination", "show", "evil", "--data-dir", dir},
	} {
		r := runCLI(t, nil, "", args...)
		if r.code != exitOK {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
		if strings.ContainsAny(r.stdout, "\u202e\u0085\x7f") {
			t.Errorf("%v printed a control or bidi character raw:\n%q", args, r.stdout)
		}
	}
}
