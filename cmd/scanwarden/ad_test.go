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

type adResult struct {
	code           int
	stdout, stderr string
}

// runADCLI runs `scanwarden ad ARGS` with its own environment variables.
func runADCLI(t *testing.T, vars map[string]string, args ...string) adResult {
	t.Helper()
	var out, errb bytes.Buffer
	env := environ{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code := runIn(context.Background(), env, append([]string{"ad"}, args...))
	return adResult{code, out.String(), errb.String()}
}

func TestADBadArguments(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("svc-pass\n"), 0o600)
	conn := []string{"--ad-url", "ldaps://127.0.0.1:1", "--ad-bind-user", "svc@kyolab.test", "--ad-password-file", pw}
	tests := []struct {
		name string
		args []string
		vars map[string]string
		code int
		want string
	}{
		{"nothing", nil, nil, exitUsage, "usage"},
		{"help", []string{"help"}, nil, exitOK, ""},
		{"unknown", []string{"group", "x"}, nil, exitUsage, "unknown subcommand"},
		{"no name", append([]string{"user"}, conn...), nil, exitUsage, "exactly one NAME"},
		{"two names", append([]string{"user", "a", "b"}, conn...), nil, exitUsage, "exactly one NAME"},
		{"no directory", []string{"user", "alice"}, nil, exitUsage, "--ad-url"},
		{"no password", []string{"user", "alice", "--ad-url", "ldaps://dc1", "--ad-bind-user", "svc"}, nil, exitUsage, "SCANWARDEN_AD_PASSWORD"},
		{"missing password file", []string{"user", "alice", "--ad-url", "ldaps://dc1", "--ad-bind-user", "svc", "--ad-password-file", "/nonexistent"}, nil, exitUsage, "--ad-password-file"},
		{"bad scheme", []string{"user", "alice", "--ad-url", "http://dc1", "--ad-bind-user", "svc"}, map[string]string{adPasswordEnv: "x"}, exitUsage, "scheme"},
		{"margin 0", append([]string{"user", "alice", "--ad-margin", "0"}, conn...), nil, exitUsage, "--ad-margin"},
		{"DC down", append([]string{"user", "alice"}, conn...), nil, exitUsage, "[host-unreachable]"},
		{"DC down, host", append([]string{"host", "pc7"}, conn...), nil, exitUsage, "connect to DC 127.0.0.1:1"},
		{"plain warns", []string{"user", "alice", "--ad-url", "ldap://127.0.0.1:1", "--ad-bind-user", "svc", "--ad-insecure-plain"}, map[string]string{adPasswordEnv: "svc-pass"}, exitUsage, "warning: plain LDAP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runADCLI(t, tc.vars, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr+r.stdout, tc.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, "svc-pass") {
				t.Errorf("the password appears in the output:\n%s%s", r.stdout, r.stderr)
			}
		})
	}
}

func TestADLab(t *testing.T) {
	lab := testlab.Require(t)
	vars := map[string]string{adPasswordEnv: lab.Password}
	conn := []string{"--ad-url", "ldaps://" + lab.DCIP, "--ad-bind-user", "ldapreader@" + lab.DNSDomain, "--ad-ca", lab.CA}
	user := func(name string, extra ...string) (adResult, map[string]any) {
		t.Helper()
		r := runADCLI(t, vars, append(append([]string{"user", name, "--json"}, conn...), extra...)...)
		var m map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
			t.Fatalf("%s: not JSON (%v):\n%s%s", name, err, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, lab.Password) {
			t.Fatalf("%s: the password appears in the output", name)
		}
		return r, m
	}
	contract := []string{"cause", "sam", "upn", "bad_pwd_count", "lockout_threshold", "workstations", "locked_until", "password_expires", "groups", "summary", "fix", "budget", "sids"}

	r, m := user("alice")
	if r.code != exitOK || m["cause"] != "ok" || m["sam"] != "alice" || m["upn"] != "alice@kyolab.test" || m["lockout_threshold"] != 3.0 || m["password_expires"] == nil {
		t.Errorf("alice: exit %d %v", r.code, m)
	}
	for _, k := range contract {
		if _, ok := m[k]; !ok {
			t.Errorf("alice: no %q in the JSON", k)
		}
	}
	if g, _ := m["groups"].([]any); len(g) != 1 || g[0] != "scanners" {
		t.Errorf("alice: groups %v", m["groups"])
	}

	r, m = user("erin")
	if r.code != exitFinding || m["cause"] != "account-locked" || m["locked_until"] == nil || m["budget"] != 0.0 {
		t.Errorf("erin: exit %d %v", r.code, m)
	}
	r, m = user("ivan", "--workstation", "MFP01")
	if r.code != exitOK || m["workstation"] != "MFP01" {
		t.Errorf("ivan from MFP01: exit %d %v", r.code, m)
	}
	if w, _ := m["workstations"].([]any); len(w) != 1 || w[0] != "MFP01" {
		t.Errorf("ivan: workstations %v", m["workstations"])
	}
	for name, cause := range map[string]string{"dave": "account-disabled", "frank": "password-must-change", "grace": "password-expired",
		"heidi": "account-expired", "ivan": "workstation-restricted", "judy": "logon-hours", "nosuch": "unknown-user", "*)(cn=*": "unknown-user"} {
		r, m := user(name)
		if r.code != exitFinding || m["cause"] != cause {
			t.Errorf("%s: exit %d cause %v, want 1 %s", name, r.code, m["cause"], cause)
		}
	}

	// Human output.
	h := runADCLI(t, vars, append([]string{"user", "ivan"}, conn...)...)
	if h.code != exitFinding || !strings.Contains(h.stdout, "may log on only to MFP01 — the MFP sends SCANWARDEN") || !strings.Contains(h.stdout, "fix: Add SCANWARDEN") {
		t.Errorf("ivan, human: exit %d\n%s%s", h.code, h.stdout, h.stderr)
	}
	h = runADCLI(t, vars, append([]string{"host", "dc1"}, conn...)...)
	if h.code != exitOK || !strings.Contains(h.stdout, "dc1.kyolab.test runs Samba") {
		t.Errorf("host dc1: exit %d\n%s%s", h.code, h.stdout, h.stderr)
	}
	h = runADCLI(t, vars, append([]string{"host", "nosuchhost", "--json"}, conn...)...)
	if h.code != exitFinding || !strings.Contains(h.stdout, `"found": false`) {
		t.Errorf("host nosuchhost: exit %d\n%s%s", h.code, h.stdout, h.stderr)
	}

	// SRV discovery inside the lab, and a DC that is down.
	h = runADCLI(t, vars, "user", "alice", "--ad-domain", lab.DNSDomain, "--ad-bind-user", "ldapreader@"+lab.DNSDomain, "--ad-ca", lab.CA)
	if h.code != exitOK {
		t.Errorf("SRV: exit %d\n%s%s", h.code, h.stdout, h.stderr)
	}
	h = runADCLI(t, vars, "user", "alice", "--ad-url", "ldaps://"+lab.GhostIP, "--ad-bind-user", "ldapreader@"+lab.DNSDomain, "--ad-ca", lab.CA)
	if h.code != exitUsage || !strings.Contains(h.stderr, lab.GhostIP) || !strings.Contains(h.stderr, "host-unreachable") {
		t.Errorf("ghost: exit %d\n%s%s", h.code, h.stdout, h.stderr)
	}
}
