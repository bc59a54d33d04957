package doctor

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/safefile"
	"github.com/scanwarden/scanwarden/internal/webcert"
)

// webCert states how the page is served and, under HTTPS, its
// certificate's SHA-256 fingerprint and end; it returns the certificate
// (nil: plain HTTP, or none could be read) for the daemon check to pin.
func (d *doc) webCert(cfg config.Config) *x509.Certificate {
	if !cfg.WebTLS() {
		def := cfg
		def.Web.TLS = nil
		if def.WebTLS() { // tls = false where HTTPS would be the default
			d.add("web.tls", Warn, "leave [web] tls out (HTTPS with the box's own certificate), or listen on 127.0.0.1 behind a reverse proxy",
				"[web] tls = false on %s: the admin password and the session cookie cross the network in clear", cfg.Listen)
		} else {
			d.add("web.tls", Skip, "", "plain HTTP on the loopback address %s (only this box reaches it)", cfg.Listen)
		}
		return nil
	}
	file, own := cfg.Web.CertFile, true
	if file == "" {
		file, own = filepath.Join(cfg.DataDir, webcert.CertName), false
	}
	leaf, err := readLeaf(file, own)
	switch {
	case errors.Is(err, os.ErrNotExist) && !own:
		d.add("web.tls", Warn, "start the daemon (systemctl start scanwarden): it makes the certificate at its first start",
			"HTTPS on %s, but no self-signed certificate in %s yet", cfg.Listen, file)
		return nil
	case errors.Is(err, os.ErrPermission):
		d.add("web.tls", Fail, "run doctor as root (sudo scanwarden doctor), and make the file readable by user scanwarden",
			"%s: %v", file, err)
		return nil
	case err != nil:
		fix := "replace it with a PEM certificate (chain) and restart: [web] cert_file"
		if !own {
			fix = "remove " + file + " and " + filepath.Join(cfg.DataDir, webcert.KeyName) + ", then restart the daemon: it makes a new one"
		}
		d.add("web.tls", Fail, fix, "%s: %v", file, err)
		return nil
	}
	kind := "the box's self-signed certificate"
	if own {
		kind = "the certificate"
	}
	names := strings.Join(leaf.DNSNames, ", ")
	for _, ip := range leaf.IPAddresses {
		names += ", " + ip.String()
	}
	detail := fmt.Sprintf("HTTPS on %s with %s %s: SHA-256 fingerprint %s, valid until %s (for %s)", cfg.Listen, kind, file,
		webcert.Fingerprint(leaf), leaf.NotAfter.UTC().Format("2006-01-02 15:04 MST"), strings.TrimPrefix(names, ", "))
	left := leaf.NotAfter.Sub(d.opt.Now())
	switch {
	case left <= 0:
		fix := "renew it and put it at [web] cert_file (read again within an hour)"
		if !own {
			fix = "restart the daemon: it makes a new one"
		}
		d.add("web.tls", Fail, fix, "%s — expired", detail)
	case left < webcert.RenewBefore && own:
		d.add("web.tls", Warn, "renew it (the daemon reads the new files within an hour)", "%s — ends in %d days", detail, int(left.Hours()/24))
	default:
		d.add("web.tls", OK, "", "%s", detail)
	}
	return leaf
}

// readLeaf reads the first certificate of a PEM file (the key is not
// needed to tell what the page shows). Not own: the daemon's self-signed
// one in its data dir, read as the daemon's file (safefile: no FIFO, no
// symlink).
func readLeaf(file string, own bool) (*x509.Certificate, error) {
	read := os.ReadFile
	if !own {
		read = func(p string) ([]byte, error) { return safefile.Read(p, 1<<20) }
	}
	b, err := read(file)
	if err != nil {
		return nil, err
	}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM certificate in the file")
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
}
