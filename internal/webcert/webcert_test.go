package webcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	names := Names{DNS: []string{"scanbox", "localhost"}, IPs: []netip.Addr{netip.MustParseAddr("10.77.0.2"), netip.MustParseAddr("::1")}}
	c, made, err := Ensure(dir, names, now)
	if err != nil || !made || !c.SelfSigned {
		t.Fatalf("first: made %v err %v", made, err)
	}
	if k, ok := c.Pair.PrivateKey.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
		t.Fatalf("key %T, want ECDSA P-256", c.Pair.PrivateKey)
	}
	if c.Leaf.NotAfter.Sub(now) < Lifetime-time.Minute || c.Leaf.Subject.CommonName != "scanbox" {
		t.Errorf("leaf %v %v", c.Leaf.Subject, c.Leaf.NotAfter)
	}
	if err := c.Leaf.VerifyHostname("10.77.0.2"); err != nil {
		t.Error(err)
	}
	if err := c.Leaf.VerifyHostname("scanbox"); err != nil {
		t.Error(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, KeyName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file %v %v", fi.Mode(), err)
	}
	fp := c.Fingerprint()
	if len(fp) != 32*3-1 || strings.Count(fp, ":") != 31 || strings.ToUpper(fp) != fp {
		t.Errorf("fingerprint %q", fp)
	}

	// Kept while fresh and naming the box.
	c2, made, err := Ensure(dir, names, now.Add(300*24*time.Hour))
	if err != nil || made || c2.Fingerprint() != fp {
		t.Fatalf("second: made %v err %v", made, err)
	}
	// Renewed within RenewBefore of its end, with the same key.
	c3, made, err := Ensure(dir, names, now.Add(Lifetime-RenewBefore+time.Hour))
	if err != nil || !made || c3.Fingerprint() == fp || c3.SPKIHash() != c.SPKIHash() {
		t.Fatalf("renewal: made %v err %v (spki %s → %s)", made, err, c.SPKIHash(), c3.SPKIHash())
	}
	// Made again when the box has a new address.
	names.IPs = append(names.IPs, netip.MustParseAddr("10.77.0.3"))
	c4, made, err := Ensure(dir, names, now.Add(Lifetime-RenewBefore+2*time.Hour))
	if err != nil || !made || c4.Leaf.VerifyHostname("10.77.0.3") != nil {
		t.Fatalf("new address: made %v err %v", made, err)
	}
	// A damaged file: a new certificate and key.
	os.WriteFile(filepath.Join(dir, KeyName), []byte("junk"), 0o600)
	c5, made, err := Ensure(dir, names, now)
	if err != nil || !made || c5.SPKIHash() == c.SPKIHash() {
		t.Fatalf("damaged: made %v err %v", made, err)
	}
}

func TestKeeperRenews(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	k, made, err := NewSelfSigned(dir, Names{DNS: []string{"localhost"}}, clock)
	if err != nil || !made {
		t.Fatal(err)
	}
	var changes []string
	k.OnChange = func(c *Cert, err error) {
		if err != nil {
			changes = append(changes, err.Error())
			return
		}
		changes = append(changes, c.Fingerprint())
	}
	first := k.Current().Fingerprint()
	now = now.Add(200 * 24 * time.Hour)
	k.GetCertificate(&tls.ClientHelloInfo{})
	if len(changes) != 0 || k.Current().Fingerprint() != first {
		t.Fatalf("renewed too early: %v", changes)
	}
	now = now.Add(Lifetime - RenewBefore - 200*24*time.Hour + time.Hour)
	got, err := k.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || len(changes) != 1 || changes[0] == first || k.Current().Fingerprint() != changes[0] {
		t.Fatalf("not renewed: %v %v", changes, err)
	}
	if Fingerprint(got.Leaf) != changes[0] {
		t.Fatal("the handshake got the old certificate")
	}
	onDisk, err := Read(dir)
	if err != nil || onDisk.Fingerprint() != changes[0] {
		t.Fatalf("the renewal is not on disk: %v", err)
	}
}

func TestKeeperReloadsOwnFiles(t *testing.T) {
	dir, own := t.TempDir(), t.TempDir()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a, _, _ := Ensure(dir, Names{DNS: []string{"a.example"}}, now)
	cf, kf := filepath.Join(own, "c.pem"), filepath.Join(own, "k.pem")
	copyFile(t, a.CertFile, cf)
	copyFile(t, a.KeyFile, kf)
	k, err := NewFiles(cf, kf, func() time.Time { return now })
	if err != nil || k.Current().Fingerprint() != a.Fingerprint() || k.Current().SelfSigned {
		t.Fatal(err)
	}
	var failed error
	k.OnChange = func(_ *Cert, err error) { failed = err }
	os.WriteFile(kf, []byte("half-written"), 0o600)
	now = now.Add(CheckEvery)
	k.GetCertificate(nil)
	if failed == nil || k.Current().Fingerprint() != a.Fingerprint() {
		t.Fatalf("a broken key: %v", failed)
	}
	b, _, _ := Ensure(t.TempDir(), Names{DNS: []string{"b.example"}}, now)
	copyFile(t, b.CertFile, cf)
	copyFile(t, b.KeyFile, kf)
	now = now.Add(CheckEvery)
	k.GetCertificate(nil)
	if k.Current().Fingerprint() != b.Fingerprint() {
		t.Fatal("the new files were not read")
	}
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
