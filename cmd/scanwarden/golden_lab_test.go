package main

// Golden human output, one file per cause, from real lab peers: what an
// admin reads and copies. Volatile parts (milliseconds, canary names, the
// client's ephemeral port, clock times) are normalised before comparing.
// After a deliberate wording change:
//
//	testlab/lab exec go test ./cmd/scanwarden/ -run TestLabGoldenOutput -update
//
// then read the diff of testdata/golden/ as an admin would.

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.txt from the lab")

var goldenVolatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\s+(\d+ms|-)  `), " Nms  "},
	{regexp.MustCompile(`\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d{4})?\b`), "D Mon"}, // a date in another year carries it
	{regexp.MustCompile(`scanwarden-check-\d{8}T\d{6}Z-[0-9a-f]{12}\.tmp`), "scanwarden-check-CANARY.tmp"},
	{regexp.MustCompile(`(10\.77\.0\.2):\d+`), "$1:PORT"},
	{regexp.MustCompile(`\b\d{2}:\d{2}\b`), "HH:MM"},
}

func normaliseGolden(s string) string {
	for _, v := range goldenVolatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

func TestLabGoldenOutput(t *testing.T) {
	lab := testlab.Require(t)
	dc := "//" + lab.DCHost
	ad := []string{"--ad-url", "ldaps://" + lab.DCIP, "--ad-bind-user", "ldapreader@" + lab.DNSDomain, "--ad-ca", lab.CA}
	const wrong = "Not-The-Password-1"
	cases := []struct {
		name  string
		cause scanwarden.Cause
		pw    string // "" = the lab password
		args  []string
		after func(t *testing.T)
	}{
		{name: "ok", cause: scanwarden.CauseOK, args: []string{dc + "/scans", "--user", lab.Domain + `\alice`}},
		{name: "name-unresolved", cause: scanwarden.CauseNameUnresolved, args: []string{"//nosuchhost." + lab.DNSDomain + "/scans", "--user", "alice"}},
		{name: "host-unreachable", cause: scanwarden.CauseHostUnreachable, args: []string{"//" + lab.GhostIP + "/scans", "--user", "alice"}},
		{name: "not-smb-port", cause: scanwarden.CauseNotSMBPort, args: []string{"//" + lab.DCIP + ":389/scans", "--user", "alice"}},
		{name: "timeout", cause: scanwarden.CauseTimeout, args: []string{"//" + lab.TarpitIP + "/scans", "--user", "alice", "--timeout", "1500ms"}},
		{name: "smb1-refused", cause: scanwarden.CauseSMB1Refused, args: []string{"//" + lab.SMB2IP + "/scans", "--user", "scanuser", "--device-smb1-only"}},
		{name: "signing-required", cause: scanwarden.CauseSigningRequired, args: []string{"//" + lab.SignIP + "/scans", "--user", "scanuser", "--device-no-signing"}},
		{name: "bad-credentials", cause: scanwarden.CauseBadCredentials, pw: wrong, args: []string{dc + "/scans", "--user", lab.Domain + `\badpw4`, "--max-failures", "1"},
			after: func(t *testing.T) { goodLogonCLI(t, lab, "badpw4") }},
		{name: "wrong-user-format", cause: scanwarden.CauseWrongUserFormat, args: []string{dc + "/scans", "--user", "john.doe", "--no-write"}},
		{name: "unknown-user", cause: scanwarden.CauseUnknownUser, args: append([]string{dc + "/scans", "--user", lab.Domain + `\nobody.here`}, ad...)},
		{name: "account-disabled", cause: scanwarden.CauseAccountDisabled, args: []string{dc + "/scans", "--user", lab.Domain + `\dave`}},
		{name: "account-locked", cause: scanwarden.CauseAccountLocked, args: []string{dc + "/scans", "--user", lab.Domain + `\erin`}},
		{name: "password-expired", cause: scanwarden.CausePasswordExpired, args: []string{dc + "/scans", "--user", lab.Domain + `\grace`}},
		{name: "password-must-change", cause: scanwarden.CausePasswordMustChange, args: []string{dc + "/scans", "--user", lab.Domain + `\frank`}},
		{name: "account-expired", cause: scanwarden.CauseAccountExpired, args: []string{dc + "/scans", "--user", lab.Domain + `\heidi`}},
		{name: "workstation-restricted", cause: scanwarden.CauseWorkstationRestricted, args: []string{dc + "/scans", "--user", lab.Domain + `\ivan`, "--workstation", "MFP02"}},
		{name: "logon-hours", cause: scanwarden.CauseLogonHours, args: []string{dc + "/scans", "--user", lab.Domain + `\judy`}},
		{name: "share-not-found", cause: scanwarden.CauseShareNotFound, args: []string{dc + "/nosuchshare", "--user", lab.Domain + `\alice`}},
		{name: "share-access-denied", cause: scanwarden.CauseShareAccessDenied, args: []string{dc + "/restricted", "--user", lab.Domain + `\alice`}},
		{name: "path-not-found", cause: scanwarden.CausePathNotFound, args: []string{dc + "/scans/nosuch/deeper", "--user", lab.Domain + `\alice`}},
		{name: "no-write-permission", cause: scanwarden.CauseNoWritePermission, args: append([]string{dc + "/scans/denied", "--user", lab.Domain + `\alice`}, ad...)},
		{name: "no-delete-permission", cause: scanwarden.CauseNoDeletePermission, args: []string{dc + "/scans/nodelete", "--user", lab.Domain + `\alice`}},
		{name: "disk-full", cause: scanwarden.CauseDiskFull, args: []string{dc + "/full", "--user", lab.Domain + `\alice`}},
		{name: "guest-refused", cause: scanwarden.CauseGuestRefused, args: []string{dc + "/scans", "--user", "", "--no-password"}},
		{name: "smb1-only-server", cause: scanwarden.CauseSMB1OnlyServer, args: []string{"//smb1srv." + lab.DNSDomain + "/scans", "--user", "scanuser"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cause == scanwarden.CauseAccountLocked {
				lab.LockErin(t)
			}
			pw := tc.pw
			if pw == "" {
				pw = lab.Password
			}
			t.Setenv(passwordEnv, pw)
			t.Setenv(adPasswordEnv, lab.Password)
			args := append([]string{"check", "--state-dir", t.TempDir()}, tc.args...)
			r := runCLI(t, nil, "", args...)
			if tc.after != nil {
				tc.after(t)
			}
			if !strings.Contains(r.stdout, "\nverdict: "+string(tc.cause)) {
				t.Fatalf("exit %d, want verdict %s:\n%s%s", r.code, tc.cause, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, lab.Password) || strings.Contains(r.stdout+r.stderr, wrong) {
				t.Fatal("a password is in the output")
			}
			got := normaliseGolden(r.stdout)
			file := filepath.Join("testdata", "golden", tc.name+".txt")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("human output differs from %s (run with -update after a deliberate change):\n--- got\n%s--- want\n%s", file, got, want)
			}
		})
	}
}

// goodLogonCLI logs user on with the right password: a wrong-password case
// leaves its own account's bad-password count at zero again.
func goodLogonCLI(t *testing.T, lab *testlab.Lab, user string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := (&smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: user, Password: lab.Password, Domain: lab.Domain}}).Dial(ctx, lab.DCIP+":445")
	if err != nil {
		t.Fatalf("%s cannot log on: %v", user, err)
	}
	s.Logoff()
}
