package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportDeviceConfig: import addressbook and the device verbs take
// --config, the config serve runs on: its data_dir is the data dir (unless
// --data-dir is given), import takes its allow_link_local, and a --config
// that cannot be read ends them (exit 2, naming the file).
func TestImportDeviceConfig(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfg := filepath.Join(dir, "scanwarden.toml")
	if err := os.WriteFile(cfg, []byte("data_dir = \""+data+"\"\nallow_link_local = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	book := filepath.Join(dir, "book.xml")
	if err := os.WriteFile(book, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<DeviceAddressBook_v5_2>
<Item Type="Contact" Id="1" DisplayName="Metadata" SmbHostName="169.254.169.254" SmbPath="\scans" SmbLoginName="scan" SmbLoginPasswd="" SmbPort="445"/>
</DeviceAddressBook_v5_2>
`), 0o600); err != nil {
		t.Fatal(err)
	}
	imp := []string{"import", "addressbook", book, "--device", "mfp01"}
	if r := runCLI(t, nil, "", append(imp, "--data-dir", data)...); r.code != exitUsage || !strings.Contains(r.stderr, "allow_link_local") {
		t.Errorf("a link-local contact without --config: exit %d, %s", r.code, r.stderr)
	}
	if r := runCLI(t, nil, "", append(imp, "--config", cfg)...); r.code != exitOK || !strings.Contains(r.stdout, "imported 1 ") {
		t.Errorf("a link-local contact under allow_link_local of --config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The import went to --config's data_dir: the device verbs find it there.
	if r := runCLI(t, nil, "", "device", "list", "--config", cfg); r.code != exitOK || !strings.Contains(r.stdout, "mfp01") {
		t.Errorf("device list --config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "", "device", "add", "mfp02", "--model", "TASKalfa 3554ci", "--config", cfg); r.code != exitOK {
		t.Errorf("device add --config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "", "device", "show", "mfp02", "--config", cfg); r.code != exitOK || !strings.Contains(r.stdout, "TASKalfa 3554ci") {
		t.Errorf("device show --config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, nil, "", "device", "remove", "mfp02", "--config", cfg); r.code != exitOK {
		t.Errorf("device remove --config: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// --data-dir wins over the config's data_dir.
	other := filepath.Join(dir, "other")
	if r := runCLI(t, nil, "", "device", "list", "--config", cfg, "--data-dir", other); r.code != exitOK || strings.Contains(r.stdout, "mfp01") {
		t.Errorf("device list --config --data-dir %s: exit %d\n%s%s", other, r.code, r.stdout, r.stderr)
	}
	missing := filepath.Join(dir, "nosuch.toml")
	for _, args := range [][]string{imp, {"device", "list"}, {"device", "show", "mfp01"}, {"device", "add", "mfp03"}, {"device", "remove", "mfp01"}} {
		r := runCLI(t, nil, "", append(args, "--config", missing, "--data-dir", data)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "config: open "+missing+": ") { // the path as typed, not quoted
			t.Errorf("%v --config %s: exit %d, %s", args, missing, r.code, r.stderr)
		}
	}
}
