package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden/store"
)

func TestAdminCLI(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("a long admin password\n"), 0o600)

	for _, args := range [][]string{
		{"admin"},
		{"admin", "nope"},
		{"admin", "token"},
		{"admin", "token", "create"},
		{"admin", "token", "create", "bad name!", "--data-dir", dir},
		{"admin", "set-password", "--data-dir", dir},
	} {
		if r := runCLI(t, nil, "", args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want 2", args, r.code)
		}
	}
	if r := runCLI(t, nil, "short\n", "admin", "set-password", "--data-dir", dir, "--password-file", "-"); r.code != exitUsage ||
		!strings.Contains(r.stderr, "at least 10") {
		t.Errorf("short password: %+v", r)
	}
	r := runCLI(t, nil, "", "admin", "set-password", "--data-dir", dir, "--password-file", pw)
	if r.code != exitOK {
		t.Fatalf("set-password: %+v", r)
	}
	r = runCLI(t, nil, "", "admin", "token", "create", "prometheus", "--data-dir", dir)
	tok := strings.TrimSpace(r.stdout)
	if r.code != exitOK || !strings.HasPrefix(tok, "swt_") || !strings.Contains(r.stderr, "shown once") {
		t.Fatalf("token create: %+v", r)
	}
	if r := runCLI(t, nil, "", "admin", "token", "create", "prometheus", "--data-dir", dir); r.code != exitUsage {
		t.Errorf("duplicate token: %+v", r)
	}
	if r := runCLI(t, nil, "", "admin", "token", "create", "scrape", "--scope", "metrics", "--data-dir", dir); r.code != exitOK {
		t.Errorf("token create --scope metrics: %+v", r)
	}
	if r := runCLI(t, nil, "", "admin", "token", "create", "x", "--scope", "root", "--data-dir", dir); r.code != exitUsage ||
		!strings.Contains(r.stderr, "metrics, read or admin") {
		t.Errorf("token create --scope root: %+v", r)
	}
	r = runCLI(t, nil, "", "admin", "token", "list", "--data-dir", dir)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "prometheus\tscope read\t") || !strings.Contains(r.stdout, "scrape\tscope metrics\t") ||
		strings.Contains(r.stdout, tok) {
		t.Errorf("token list: %+v", r)
	}

	// What is stored: an argon2id hash, the token's SHA-256, the audit.
	st, err := store.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := st.Auth().AdminPassword(context.Background())
	if !strings.HasPrefix(h, "$argon2id$") || strings.Contains(h, "a long admin password") {
		t.Errorf("stored password %q", h)
	}
	toks, _ := st.Auth().Tokens(context.Background())
	if len(toks) != 2 || toks[0].Hash == tok || len(toks[0].Hash) != 64 || toks[1].Scope != "metrics" {
		t.Errorf("stored token %+v", toks)
	}
	log, _ := st.Auth().Audit(context.Background(), 10)
	if len(log) != 3 || log[0].Action != "token.create" || log[0].Actor != "cli" {
		t.Errorf("audit %+v", log)
	}
	st.Close()

	if r := runCLI(t, nil, "", "admin", "token", "revoke", "prometheus", "--data-dir", dir); r.code != exitOK {
		t.Errorf("revoke: %+v", r)
	}
	if r := runCLI(t, nil, "", "admin", "token", "revoke", "prometheus", "--data-dir", dir); r.code != exitUsage {
		t.Errorf("revoke twice: %+v", r)
	}
	// A new password revokes the tokens left (the scrape token) unless told not to.
	if r := runCLI(t, nil, "", "admin", "set-password", "--data-dir", dir, "--password-file", pw, "--revoke-tokens=false"); r.code != exitOK ||
		!strings.Contains(r.stdout, "tokens are kept") {
		t.Errorf("set-password --revoke-tokens=false: %+v", r)
	}
	if r := runCLI(t, nil, "", "admin", "set-password", "--data-dir", dir, "--password-file", pw); r.code != exitOK ||
		!strings.Contains(r.stdout, "1 API token(s) are revoked") {
		t.Errorf("set-password: %+v", r)
	}
}
