package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabStoredProfileSigningRequired: a device stored as not signing
// (no flag on the check) replays that profile against signsrv, which
// requires signing, and `check --destination` names signing-required with
// its panel code; the same destination without the device negotiates past
// it. Signing is decided at negotiate, so no password is needed.
func TestLabStoredProfileSigningRequired(t *testing.T) {
	lab := testlab.Require(t)
	isolate(t)
	data := filepath.Join(t.TempDir(), "data")
	cli := cliIn(t, data)
	cli(exitOK, "device", "add", "mfp01", "--device-no-signing")
	cli(exitOK, "destination", "add", "front", "//"+lab.SignIP+"/scans", "--user", "scanuser", "--no-password", "--device", "mfp01")
	cli(exitOK, "destination", "add", "front-own", "//"+lab.SignIP+"/scans", "--user", "scanuser", "--no-password")

	r := cli(exitFinding, "check", "--destination", "front", "--timeout", "10s")
	for _, want := range []string{
		"replaying as device mfp01's SMB client: signing no (set by hand)",
		"verdict: signing-required (the panel most likely shows 1102)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check --destination front lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, nil, "", "check", "--destination", "front-own", "--timeout", "10s", "--data-dir", data)
	if strings.Contains(r.stdout, "verdict: signing-required") || !strings.Contains(r.stdout, "ok      negotiate") {
		t.Errorf("without the device, the check should negotiate past signing:\n%s", r.stdout)
	}
}
