package seal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", FileName)
	k, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v %v", st.Mode(), err)
	}
	if _, err := Create(p); !errors.Is(err, os.ErrExist) {
		t.Fatalf("Create over an existing key: %v", err)
	}
	k2, err := Load(p)
	if err != nil || k2.ID() != k.ID() || len(k.ID()) != 16 {
		t.Fatalf("reload: %v %s %s", err, k2, k)
	}
	secret := []byte("s3cr3t-Pässword")
	c1, c2 := k.Seal(secret, "a"), k.Seal(secret, "a")
	if bytes.Equal(c1, c2) || bytes.Contains(c1, secret) {
		t.Fatal("sealing must be randomised and opaque")
	}
	if pt, err := k2.Open(c1, "a"); err != nil || !bytes.Equal(pt, secret) {
		t.Fatalf("open: %q %v", pt, err)
	}
	if _, err := k2.Open(c1, "b"); !errors.Is(err, ErrOpen) {
		t.Fatalf("another label must not open: %v", err)
	}
	other, _ := New()
	if _, err := other.Open(c1, "a"); !errors.Is(err, ErrOpen) {
		t.Fatalf("another key must not open: %v", err)
	}
	c1[len(c1)-1] ^= 1
	if _, err := k.Open(c1, "a"); !errors.Is(err, ErrOpen) {
		t.Fatal("a damaged value must not open")
	}
	for _, b := range [][]byte{nil, {1}, {2, 0, 0}} {
		if _, err := k.Open(b, "a"); !errors.Is(err, ErrOpen) {
			t.Fatalf("%x opened", b)
		}
	}
	if bytes.Equal(k.Derive("ledger"), k.Derive("other")) || len(k.Derive("ledger")) != 32 {
		t.Fatal("derived keys must differ by label")
	}
	if strings.Contains(k.String(), string(k.raw)) {
		t.Fatal("String shows the key")
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "none")); !errors.Is(err, ErrNoKey) {
		t.Fatalf("missing: %v", err)
	}
	cases := map[string]struct {
		content string
		mode    os.FileMode
	}{
		"short":    {"abcd\n", 0o600},
		"not hex":  {strings.Repeat("zz", 32), 0o600},
		"readable": {strings.Repeat("ab", 32), 0o644},
	}
	for name, c := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(p, []byte(c.content), c.mode)
		os.Chmod(p, c.mode)
		if _, err := Load(p); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	raw := filepath.Join(dir, "raw")
	os.WriteFile(raw, bytes.Repeat([]byte{7}, 32), 0o600)
	if _, err := Load(raw); err != nil {
		t.Errorf("32 raw bytes: %v", err)
	}
}

func TestResolve(t *testing.T) {
	creds := t.TempDir()
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if got := Resolve("", get, "/data"); got != "/data/secret.key" {
		t.Errorf("default: %s", got)
	}
	env["CREDENTIALS_DIRECTORY"] = creds
	if got := Resolve("", get, "/data"); got != "/data/secret.key" {
		t.Errorf("credentials dir without the key: %s", got)
	}
	os.WriteFile(filepath.Join(creds, FileName), []byte("x"), 0o600)
	if got := Resolve("", get, "/data"); got != filepath.Join(creds, FileName) {
		t.Errorf("credentials: %s", got)
	}
	env[EnvKeyFile] = "/env.key"
	if got := Resolve("", get, "/data"); got != "/env.key" {
		t.Errorf("env: %s", got)
	}
	if got := Resolve("/flag.key", get, "/data"); got != "/flag.key" {
		t.Errorf("flag: %s", got)
	}
}
