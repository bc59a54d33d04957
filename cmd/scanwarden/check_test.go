package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/testlab"
)

type result struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, _ map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// cliIn runs the CLI with --data-dir data appended and fails the test
// unless it exits with want.
func cliIn(t *testing.T, data string) func(want int, args ...string) result {
	return func(want int, args ...string) result {
		t.Helper()
		r := runCLI(t, nil, "", append(args, "--data-dir", data)...)
		if r.code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, r.code, want, r.stdout, r.stderr)
		}
		return r
	}
}

func TestCheckBadArguments(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\nsecond line\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no destination", []string{"check", "--user", "a", "--password-file", pw}, "destination"},
		{"bad destination", []string{"check", "fs1/scans", "--user", "a", "--password-file", pw}, "//HOST"},
		{"no share", []string{"check", "//fs1", "--user", "a", "--password-file", pw}, "share"},
		{"no user", []string{"check", "//fs1/scans", "--password-file", pw}, "user"},
		{"no password", []string{"check", "//fs1/scans", "--user", "a"}, "password"},
		{"missing password file", []string{"check", "//fs1/scans", "--user", "a", "--password-file", filepath.Join(dir, "nope")}, "--password-file"},
		{"negative budget", []string{"check", "//fs1/scans", "--user", "a", "--password-file", pw, "--max-failures", "-1"}, "--max-failures"},
		{"unknown flag", []string{"check", "//fs1/scans", "--frobnicate"}, "frobnicate"},
		{"no-password and a password file", []string{"check", "//fs1/scans", "--user", "a", "--no-password", "--password-file", pw}, "--no-password"},
		{"empty password file", []string{"check", "//fs1/scans", "--user", "a", "--password-file", empty}, "password"},
		{"user of spaces", []string{"check", "//fs1/scans", "--user", "  ", "--no-password"}, "user"},
		{"event log user without its password", []string{"check", "//fs1/scans", "--user", "a", "--password-file", pw, "--eventlog-user", "r"}, "--eventlog-password-file"},
		{"WINS not an address", []string{"check", "//fs1/scans", "--user", "a", "--password-file", pw, "--wins", "10.0.0.5,wins1"}, `--wins: "wins1" is not a WINS server's IPv4 address`},
		{"event log password without its user", []string{"check", "//fs1/scans", "--user", "a", "--password-file", pw, "--eventlog-password-file", pw}, "--eventlog-user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SCANWARDEN_PASSWORD", "")
			t.Setenv("SCANWARDEN_STATE_DIR", t.TempDir())
			r := runCLI(t, nil, "", tc.args...)
			if r.code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, exitUsage, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr does not name %q: %s", tc.want, r.stderr)
			}
		})
	}
}

func TestCheckNoPasswordOnCommandLine(t *testing.T) {
	t.Setenv("SCANWARDEN_STATE_DIR", t.TempDir())
	r := runCLI(t, nil, "", "check", "//127.0.0.1:1/scans", "--user", "a", "--password", "Hunter2-Secret", "--no-write")
	if r.code != exitUsage || !strings.Contains(r.stderr, "-password") {
		t.Errorf("--password accepted: exit %d, %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "Hunter2-Secret") {
		t.Error("the password was printed")
	}
}

// TestCheckBlankDestinations: --user ” and --no-password are taken and
// replayed (loopback port 1: the check runs, exit 1, nothing leaves).
func TestCheckBlankDestinations(t *testing.T) {
	for _, args := range [][]string{
		{"--user", ""},
		{"--user", "", "--no-password"},
		{"--user", "scan", "--no-password"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Setenv("SCANWARDEN_PASSWORD", "")
			t.Setenv("SCANWARDEN_STATE_DIR", t.TempDir())
			r := runCLI(t, nil, "", append([]string{"check", "//127.0.0.1:1/scans", "--no-write", "--timeout", "1s"}, args...)...)
			if r.code != exitFinding {
				t.Fatalf("exit %d, want %d; stderr %s", r.code, exitFinding, r.stderr)
			}
			if args[1] == "" && !strings.Contains(r.stdout, "empty login name") {
				t.Errorf("header does not say the login is empty: %s", r.stdout)
			}
		})
	}
}

func TestCheckLab(t *testing.T) {
	lab := testlab.Require(t)
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(lab.Password+"\n"), 0o600)
	state := filepath.Join(dir, "state")
	dest := "//" + lab.DCHost + "/scans"

	ok := runCLI(t, nil, "", "check", dest, "--user", lab.Domain+`\alice`, "--password-file", pw, "--state-dir", state)
	if ok.code != exitOK {
		t.Fatalf("exit %d: %s %s", ok.code, ok.stdout, ok.stderr)
	}
	for _, want := range []string{"name", "tcp", "negotiate", "session", "tree", "write", "verdict: ok", "fix:"} {
		if !strings.Contains(ok.stdout, want) {
			t.Errorf("human output lacks %q:\n%s", want, ok.stdout)
		}
	}

	js := runCLI(t, nil, lab.Password+"\n", "check", dest+"/nosuchfolder", "--json", "--user", "john.doe", "--password-file", "-", "--state-dir", state)
	if js.code != exitFinding {
		t.Fatalf("exit %d: %s %s", js.code, js.stdout, js.stderr)
	}
	var rep struct {
		Target  map[string]any   `json:"target"`
		Steps   []map[string]any `json:"steps"`
		Verdict map[string]any   `json:"verdict"`
		Working map[string]any   `json:"working_form"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, js.stdout)
	}
	if rep.Verdict["cause"] != "wrong-user-format" || rep.Verdict["kyocera_code"] != "1102" {
		t.Errorf("verdict %v", rep.Verdict)
	}
	if rep.Working["typed"] != "john.doe@"+lab.DNSDomain {
		t.Errorf("working_form %v", rep.Working)
	}
	for _, s := range rep.Steps {
		for _, k := range []string{"id", "status", "evidence", "ms"} {
			if _, ok := s[k]; !ok {
				t.Errorf("step %v lacks %s", s["id"], k)
			}
		}
	}
	if strings.Contains(js.stdout+ok.stdout, lab.Password) {
		t.Fatal("the password is in the output")
	}
}

// TestCheckInterruptedPrintsVerdict: a check stopped by SIGTERM (its
// context cancelled) still prints the verdict reached so far.
func TestCheckInterruptedPrintsVerdict(t *testing.T) {
	t.Setenv("SCANWARDEN_STATE_DIR", t.TempDir())
	t.Setenv(passwordEnv, "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"check", "//127.0.0.1:1/scans", "--user", "a", "--no-write"}, strings.NewReader(""), &out, &errb)
	if code == exitUsage || !strings.Contains(out.String(), "verdict:") || !strings.Contains(out.String(), "interrupted") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}
