package webcert

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// CheckEvery is how often (at most, on a handshake) a Keeper looks whether
// its certificate needs renewing or its files changed.
const CheckEvery = time.Hour

// Keeper hands the certificate to TLS handshakes and keeps it fresh: the
// self-signed one is made again once it is within RenewBefore of its end;
// an admin's own files are read again when they change on disk (a renewal
// by another tool). A renewal that fails keeps the old certificate.
type Keeper struct {
	// OnChange, when set, is told of each renewal or reload (c) or of its
	// failure (err); it runs on the handshake's goroutine.
	OnChange func(c *Cert, err error)

	now   func() time.Time
	dir   string // self-signed: the data dir
	names Names
	stamp string // own files: their sizes and times when read

	mu      sync.Mutex
	cur     *Cert
	checked time.Time
}

// NewSelfSigned keeps the self-signed certificate in dir (Ensure).
func NewSelfSigned(dir string, names Names, now func() time.Time) (k *Keeper, made bool, err error) {
	c, made, err := Ensure(dir, names, now())
	if err != nil {
		return nil, false, err
	}
	return &Keeper{now: now, dir: dir, names: names, cur: c, checked: now()}, made, nil
}

// NewFiles keeps an admin's own certificate and key files.
func NewFiles(certFile, keyFile string, now func() time.Time) (*Keeper, error) {
	stamp := fileStamp(certFile, keyFile)
	c, err := Load(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &Keeper{now: now, stamp: stamp, cur: c, checked: now()}, nil
}

func fileStamp(files ...string) string {
	s := ""
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			s += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
		} else {
			s += "-;"
		}
	}
	return s
}

// Current is the certificate served now.
func (k *Keeper) Current() *Cert {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cur
}

// TLSConfig serves the kept certificate (TLS 1.2 and later).
func (k *Keeper) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: k.GetCertificate}
}

// GetCertificate is tls.Config's hook; once per CheckEvery it renews or
// reloads first.
func (k *Keeper) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	now := k.now()
	var changed *Cert
	var failed error
	if now.Sub(k.checked) >= CheckEvery || now.Before(k.checked) {
		k.checked = now
		changed, failed = k.refresh(now)
		if changed != nil {
			k.cur = changed
		}
	}
	c := k.cur
	k.mu.Unlock()
	if (changed != nil || failed != nil) && k.OnChange != nil {
		k.OnChange(changed, failed)
	}
	return &c.Pair, nil
}

// refresh returns a new certificate, or nil when the current one stays.
func (k *Keeper) refresh(now time.Time) (*Cert, error) {
	if k.dir != "" {
		if now.Before(k.cur.Leaf.NotAfter.Add(-RenewBefore)) {
			return nil, nil
		}
		c, _, err := Ensure(k.dir, k.names, now)
		if err != nil {
			return nil, fmt.Errorf("renew the web certificate: %w", err)
		}
		return c, nil
	}
	stamp := fileStamp(k.cur.CertFile, k.cur.KeyFile)
	if stamp == k.stamp {
		return nil, nil
	}
	c, err := Load(k.cur.CertFile, k.cur.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("reload %s: %w (the certificate read before is still served)", k.cur.CertFile, err)
	}
	k.stamp = stamp
	return c, nil
}
