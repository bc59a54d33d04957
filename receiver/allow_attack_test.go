package receiver_test

import (
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// TestAttackAllowOddEntries: allowlist entries that parse as addresses but
// that Samba's "hosts allow" reads otherwise. Samba takes a prefix length of
// three digits (an IPv6 /100–/128) for a netmask written as an address
// ("128" → 0.0.0.128), which then masks nothing: "fd00::5/128" admitted
// every IPv6 host, and an IPv4-mapped entry ("::ffff:10.77.0.9/128")
// every IPv4 host. Checked with real Samba: a real smbd (an intruder on
// 127.0.0.2 must get no answer) and testparm's own host check (the same
// allow_access code smbd runs) for IPv6, which loopback cannot play.
func TestAttackAllowOddEntries(t *testing.T) {
	mapped := netip.MustParsePrefix("::ffff:10.77.0.9/128")
	t.Run("mapped entry, real smbd", func(t *testing.T) {
		e := newEnv(t, opts{allow: []netip.Prefix{mapped}})
		addr := net.JoinHostPort(e.cfg.Listen.String(), strconv.Itoa(e.cfg.Port))
		c, err := dialFrom(intruderIP, addr)
		if err == nil {
			defer c.Close()
			err = negotiate(c, 1)
		}
		if err == nil {
			b, _ := os.ReadFile(filepath.Join(e.dir, "smbd", "smb.conf"))
			t.Fatalf("allow %s: smbd answered %s; smb.conf:\n%s", mapped, intruderIP, b)
		}
	})
	t.Run("IPv6 entries, testparm", func(t *testing.T) {
		requireSmbd(t)
		dir := t.TempDir()
		cfg := samba.Config{Dir: dir, Inbox: dir, Listen: netip.MustParseAddr("fd00::1"), Port: 445, Share: "scans",
			Accounts: []samba.Account{{Name: "swmfp", Password: scanwarden.NewSecret(mfpPassword)}},
			Allow: []netip.Prefix{netip.MustParsePrefix("fd00::5/128"), netip.MustParsePrefix("fd00:1::/120"),
				netip.MustParsePrefix("fd00:2::/100"), netip.MustParsePrefix("fd00:3::/64"), mapped}}
		conf, err := cfg.Conf()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "smb.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			ip    string
			admit bool
		}{
			{"fd00::5", true}, {"fd00::1", true}, {"fd00::6", false}, {"2001:db8::1", false},
			{"fd00:1::ff", true}, {"fd00:1::100", false},
			{"fd00:2::fff:ffff", true}, {"fd00:2::1000:0", false},
			{"fd00:3::abcd", true}, {"fd00:4::1", false},
			{"10.77.0.9", true}, {"10.77.0.10", false}, {"192.0.2.1", false},
		} {
			out, _ := exec.Command("testparm", "-s", path, "client", c.ip).CombinedOutput()
			got := strings.Contains(string(out), "Allow connection from")
			if !got && !strings.Contains(string(out), "Deny connection from") {
				t.Fatalf("testparm said neither allow nor deny for %s:\n%s", c.ip, out)
			}
			if got != c.admit {
				t.Errorf("%s: admitted %v, want %v (%s)", c.ip, got, c.admit, hostsAllowLine(conf))
			}
		}
	})
}

func hostsAllowLine(conf string) string {
	for _, l := range strings.Split(conf, "\n") {
		if strings.Contains(l, "hosts allow") {
			return strings.TrimSpace(l)
		}
	}
	return "no hosts allow"
}
