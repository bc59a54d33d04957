package samba

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

func TestSambaConfValidates(t *testing.T) {
	if _, err := exec.LookPath("testparm"); err != nil {
		if _, err := os.Stat("/usr/bin/testparm"); err != nil {
			testlab.Missing(t, "samba not installed")
		}
	}
	dir := t.TempDir()
	for _, smb1 := range []bool{false, true} {
		cfg := Config{Dir: filepath.Join(dir, "smbd"), Inbox: filepath.Join(dir, "inbox"), Listen: netip.MustParseAddr("127.0.0.9"),
			Port: 445, Share: "scans", SMB1: smb1, Accounts: []Account{{Name: "mfp", Password: scanwarden.NewSecret("x")}}}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(s.confPath())
		if _, err := s.writeConfig(context.Background()); err != nil {
			t.Fatalf("smb1=%v: %v", smb1, err)
		}
		b, _ := os.ReadFile(s.confPath())
		if got := strings.Contains(string(b), "ntlmv1-permitted"); got != smb1 {
			t.Errorf("smb1=%v: ntlmv1 in conf = %v", smb1, got)
		}
		if smb1 && !strings.Contains(string(b), "smb ports = 445 139") {
			t.Errorf("smb1 on 445 must also serve 139")
		}
	}
}

// The bounds against the LAN are in every generated config, and an
// allowlist becomes hosts allow + hosts deny = ALL (testparm accepts it).
func TestSambaConfBounds(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: filepath.Join(dir, "smbd"), Inbox: filepath.Join(dir, "inbox"), Listen: netip.MustParseAddr("127.0.0.9"),
		Port: 445, Share: "scans", Accounts: []Account{{Name: "mfp", Password: scanwarden.NewSecret("x")}},
		Allow: []netip.Prefix{netip.MustParsePrefix("10.77.0.5/24"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("fd00::/64")}}
	conf, err := cfg.Conf()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"max smbd processes = 64", "deadtime = 15", "server multi channel support = no",
		"hosts allow = 10.77.0.0/24 192.168.1.7/32 fd00::/64 127.0.0.9/32", "hosts deny = ALL", "unix extensions = no", "wide links = no",
		"follow symlinks = no", "map to guest = never", "guest ok = no"} {
		if !strings.Contains(conf, "\t"+want+"\n") {
			t.Errorf("smb.conf lacks %q", want)
		}
	}
	cfg.Allow = nil
	if conf, _ := cfg.Conf(); strings.Contains(conf, "hosts ") {
		t.Errorf("no allowlist, yet hosts allow/deny in the config")
	}
	cfg.Allow = []netip.Prefix{{}}
	if err := cfg.Validate(); err == nil {
		t.Errorf("an invalid network accepted")
	}
	if _, err := exec.LookPath("testparm"); err != nil {
		if _, err := os.Stat("/usr/bin/testparm"); err != nil {
			testlab.Missing(t, "samba not installed")
		}
	}
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("10.77.0.0/24")}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeConfig(context.Background()); err != nil {
		t.Fatalf("testparm: %v", err)
	}
}

func TestSambaConfigErrors(t *testing.T) {
	good := Config{Dir: "/x", Inbox: "/y", Listen: netip.MustParseAddr("127.0.0.9"), Port: 445, Share: "scans"}
	for _, tc := range []struct {
		field string
		mod   func(*Config)
	}{
		{"dir", func(c *Config) { c.Dir = "rel" }},
		{"listen", func(c *Config) { c.Listen = netip.MustParseAddr("0.0.0.0") }},
		{"port", func(c *Config) { c.Port = 0 }},
		{"share", func(c *Config) { c.Share = "a b" }},
		{"account", func(c *Config) { c.Accounts = []Account{{Name: "Bad Name", Password: scanwarden.NewSecret("x")}} }},
		{"password", func(c *Config) { c.Accounts = []Account{{Name: "mfp"}} }},
	} {
		c := good
		tc.mod(&c)
		err := c.Validate()
		ce, ok := err.(*scanwarden.FieldError)
		if !ok || ce.Field != tc.field {
			t.Errorf("%s: got %v", tc.field, err)
		}
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestSambaMissing(t *testing.T) {
	c := Config{Dir: "/x", Inbox: "/y", Listen: netip.MustParseAddr("127.0.0.1"), Port: 445, Share: "scans",
		Bin: Bin{Smbd: "/nonexistent/smbd"}}
	if _, err := New(c); !errors.Is(err, errSambaMissing) {
		t.Fatalf("got %v", err)
	}
}

// A config testparm refuses leaves the one in place.
func TestSambaBadConfigKeepsOld(t *testing.T) {
	if _, err := os.Stat("/usr/bin/testparm"); err != nil {
		testlab.Missing(t, "samba not installed")
	}
	dir := t.TempDir()
	cfg := Config{Dir: filepath.Join(dir, "smbd"), Inbox: filepath.Join(dir, "inbox"), Listen: netip.MustParseAddr("127.0.0.9"), Port: 445, Share: "scans"}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.writeConfig(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.confPath())
	s.cfg.ForceUser = "no-such-user-\x01"
	fake := filepath.Join(dir, "testparm")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'WARNING: Ignoring invalid value 'x' for parameter 'y''\nexit 1\n"), 0o755)
	s.bin.Testparm = fake
	_, err = s.writeConfig(context.Background())
	if _, ok := err.(*testparmError); !ok {
		t.Fatalf("want testparmError, got %v", err)
	}
	after, _ := os.ReadFile(s.confPath())
	if string(before) != string(after) {
		t.Fatal("refused config replaced the old one")
	}
	_ = time.Second
}

// requireRoot skips tests that run a real smbd (it must be root to become
// the logged-on user) or that need smbclient.
func requireSmbd(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testlab.Missing(t, "running a real smbd needs root")
	}
	for _, p := range []string{"/usr/sbin/smbd", "/usr/bin/smbclient", "/usr/bin/testparm"} {
		if _, err := os.Stat(p); err != nil {
			testlab.Missing(t, "samba/smbclient not installed (testlab/deps): "+p)
		}
	}
}

func strconvI(i int) string { return strconv.Itoa(i) }
