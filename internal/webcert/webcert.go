// Package webcert keeps the web page's TLS certificate: the box's own
// self-signed one (ECDSA P-256, made at first start in the data dir for the
// box's names and addresses, renewed before it expires) or an admin's own
// files. Its SHA-256 fingerprint is what the admin compares with the
// browser's before trusting the page.
package webcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File names of the self-signed certificate and its key in the data dir.
const (
	CertName = "web-cert.pem"
	KeyName  = "web-key.pem"
)

// Lifetime of a self-signed certificate, and how long before its end it is
// made again (with the same key: a pin on the key survives a renewal).
const (
	Lifetime    = 365 * 24 * time.Hour
	RenewBefore = 30 * 24 * time.Hour
)

// Cert is the certificate in use.
type Cert struct {
	Pair       tls.Certificate
	Leaf       *x509.Certificate
	SelfSigned bool   // made by Ensure
	CertFile   string // where it was read from or written to
	KeyFile    string
}

// Fingerprint is the SHA-256 of the certificate as browsers show it:
// "AB:CD:…" (32 pairs).
func (c *Cert) Fingerprint() string { return Fingerprint(c.Leaf) }

// Fingerprint is leaf's SHA-256 in browsers' notation.
func Fingerprint(leaf *x509.Certificate) string {
	sum := sha256.Sum256(leaf.Raw)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(parts, ":")
}

// SPKIHash is the base64 SHA-256 of the certificate's public key (what
// HPKP-style pins and Chromium's --ignore-certificate-errors-spki-list take).
func (c *Cert) SPKIHash() string {
	sum := sha256.Sum256(c.Leaf.RawSubjectPublicKeyInfo)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// Names are the box's names and addresses a certificate is made for.
type Names struct {
	DNS []string
	IPs []netip.Addr
}

// BoxNames are this box's host name, "localhost", and every address of its
// interfaces but link-local ones (extra: the listen address when it names
// one that is not among them).
func BoxNames(extra ...netip.Addr) (Names, error) {
	var n Names
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		n.DNS = append(n.DNS, strings.ToLower(h))
	}
	n.DNS = append(n.DNS, "localhost")
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return n, fmt.Errorf("interface addresses: %w", err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok && !ip.Unmap().IsLinkLocalUnicast() {
				n.IPs = append(n.IPs, ip.Unmap())
			}
		}
	}
	for _, ip := range extra {
		if ip.IsValid() && !ip.IsUnspecified() && !slices.Contains(n.IPs, ip.Unmap()) {
			n.IPs = append(n.IPs, ip.Unmap())
		}
	}
	return n, nil
}

// covers says whether leaf names every one of n.
func covers(leaf *x509.Certificate, n Names) bool {
	for _, d := range n.DNS {
		if !slices.Contains(leaf.DNSNames, d) {
			return false
		}
	}
	for _, ip := range n.IPs {
		if !slices.ContainsFunc(leaf.IPAddresses, func(have net.IP) bool { return have.Equal(net.IP(ip.AsSlice())) }) {
			return false
		}
	}
	return true
}

// Load reads an admin's own certificate (chain) and key, PEM.
func Load(certFile, keyFile string) (*Cert, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &Cert{Pair: pair, Leaf: pair.Leaf, CertFile: certFile, KeyFile: keyFile}, nil
}

// Read reads the self-signed certificate in dir without making or changing
// anything (doctor, `admin setup-link`).
func Read(dir string) (*Cert, error) {
	c, err := Load(filepath.Join(dir, CertName), filepath.Join(dir, KeyName))
	if err != nil {
		return nil, err
	}
	c.SelfSigned = true
	return c, nil
}

// Ensure returns the self-signed certificate in dir. It makes one when
// there is none, when it cannot be read, when it ends within RenewBefore of
// now, or when it does not name every one of names (the box got a new name
// or address); made says so. A key that can be read is kept.
func Ensure(dir string, names Names, now time.Time) (c *Cert, made bool, err error) {
	certFile, keyFile := filepath.Join(dir, CertName), filepath.Join(dir, KeyName)
	old, err := Load(certFile, keyFile)
	if err == nil && now.Before(old.Leaf.NotAfter.Add(-RenewBefore)) && !now.Before(old.Leaf.NotBefore) && covers(old.Leaf, names) {
		old.SelfSigned = true
		return old, false, nil
	}
	var key *ecdsa.PrivateKey
	if err == nil {
		key, _ = old.Pair.PrivateKey.(*ecdsa.PrivateKey)
	}
	if key == nil || key.Curve != elliptic.P256() {
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return nil, false, fmt.Errorf("make the web key: %w", err)
		}
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, false, fmt.Errorf("make the web certificate's serial: %w", err)
	}
	cn := "scanwarden"
	if len(names.DNS) > 0 {
		cn = names.DNS[0]
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"scanwarden (self-signed)"}},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(Lifetime),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              names.DNS,
	}
	for _, ip := range names.IPs {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(ip.AsSlice()))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, false, fmt.Errorf("make the web certificate: %w", err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, false, fmt.Errorf("encode the web key: %w", err)
	}
	if err := writeFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return nil, false, err
	}
	if err := writeFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, false, err
	}
	c, err = Read(dir)
	if err != nil {
		return nil, false, fmt.Errorf("read back the web certificate: %w", err)
	}
	return c, true, nil
}

// writeFile replaces path atomically with data, mode perm.
func writeFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(perm)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
