package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/store"
)

// A device's SNMP credentials belong to the address they were given for:
// `device add NAME --address ELSEWHERE` on a stored device kept its
// community (or v3 passphrases), which serve's poller then sent to the new
// address — any host the command names. Moving the address without giving
// the credentials again is refused, naming the flags, and changes nothing;
// with them it is done; the same address (its default port written out or
// not) keeps them.
func TestAttackDeviceMoveNeedsCredentialsAgain(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	comm := filepath.Join(dir, "comm")
	os.WriteFile(comm, []byte("Comm-Pw-8\n"), 0o600)
	comm2 := filepath.Join(dir, "comm2")
	os.WriteFile(comm2, []byte("Comm-Pw-9\n"), 0o600)
	cli := cliIn(t, data)
	stored := func() (address, community string) {
		t.Helper()
		st, err := store.OpenUnlocked(context.Background(), data, filepath.Join(data, "secret.key"), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		d, err := st.Devices().Device(context.Background(), "mfp02")
		if err != nil {
			t.Fatal(err)
		}
		return d.Address, d.SNMP.Community.Reveal()
	}
	cli(exitOK, "device", "add", "mfp02", "--address", "10.77.0.40:161", "--community-file", comm, "--sys-name", "MFP02")
	cli(exitOK, "device", "add", "mfp02", "--address", "10.77.0.40", "--model", "TASKalfa") // the same address
	if a, c := stored(); a != "10.77.0.40" || c != "Comm-Pw-8" {
		t.Fatalf("same address: %s %q", a, c)
	}

	r := runCLI(t, nil, "", "device", "add", "mfp02", "--address", "192.0.2.66", "--data-dir", data)
	if a, c := stored(); c == "Comm-Pw-8" && a == "192.0.2.66" {
		t.Fatalf("the community stored for 10.77.0.40 is kept for 192.0.2.66 (exit %d)", r.code)
	}
	if r.code != exitUsage || !strings.Contains(r.stderr, "--community-file") {
		t.Errorf("moving without the credentials: exit %d, want %d naming --community-file:\n%s", r.code, exitUsage, r.stderr)
	}
	if a, c := stored(); a != "10.77.0.40" || c != "Comm-Pw-8" {
		t.Errorf("a refused move changed the device: %s %q", a, c)
	}
	cli(exitOK, "device", "add", "mfp02", "--address", "192.0.2.66", "--community-file", comm2)
	if a, c := stored(); a != "192.0.2.66" || c != "Comm-Pw-9" {
		t.Errorf("moved with the community: %s %q", a, c)
	}
}
