package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/scanwarden/scanwarden/internal/safefile"
	"github.com/scanwarden/scanwarden/internal/webcert"
)

// webCheck: how the page is served (web.tls), then whether the daemon
// answers on it (daemon).
type webCheck struct{ *doc }

func (c webCheck) run(ctx context.Context) {
	c.daemonUp(ctx, c.cert())
}

// cert states how the page is served and, under HTTPS, its
// certificate's SHA-256 fingerprint and end; it returns the certificate
// (nil: plain HTTP, or none could be read) for the daemon check to pin.
func (c webCheck) cert() *x509.Certificate {
	cfg := c.cfg
	if !cfg.WebTLS() {
		def := cfg
		def.Web.TLS = nil
		if def.WebTLS() { // tls = false where HTTPS would be the default
			c.add("web.tls", Warn, "leave [web] tls out (HTTPS with the box's own certificate), or listen on 127.0.0.1 behind a reverse proxy",
				"[web] tls = false on %s: the admin password and the session cookie cross the network in clear", cfg.Listen)
		} else {
			c.add("web.tls", Skip, "", "plain HTTP on the loopback address %s (only this box reaches it)", cfg.Listen)
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
		c.add("web.tls", Warn, "start the daemon (systemctl start scanwarden): it makes the certificate at its first start",
			"HTTPS on %s, but no self-signed certificate in %s yet", cfg.Listen, file)
		return nil
	case errors.Is(err, os.ErrPermission):
		c.add("web.tls", Fail, "run doctor as root (sudo scanwarden doctor), and make the file readable by user scanwarden",
			"%s: %v", file, err)
		return nil
	case err != nil:
		fix := "replace it with a PEM certificate (chain) and restart: [web] cert_file"
		if !own {
			fix = "remove " + file + " and " + filepath.Join(cfg.DataDir, webcert.KeyName) + ", then restart the daemon: it makes a new one"
		}
		c.add("web.tls", Fail, fix, "%s: %v", file, err)
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
	left := leaf.NotAfter.Sub(c.opt.Now())
	switch {
	case left <= 0:
		fix := "renew it and put it at [web] cert_file (read again within an hour)"
		if !own {
			fix = "restart the daemon: it makes a new one"
		}
		c.add("web.tls", Fail, fix, "%s — expired", detail)
	case left < webcert.RenewBefore && own:
		c.add("web.tls", Warn, "renew it (the daemon reads the new files within an hour)", "%s — ends in %d days", detail, int(left.Hours()/24))
	default:
		c.add("web.tls", OK, "", "%s", detail)
	}
	return leaf
}

// daemonUp asks the daemon's /healthz on its listen address: over HTTPS
// when the page is served so, trusting exactly the certificate doctor read
// (cert; nil: not checked — /healthz carries no secret).
func (c webCheck) daemonUp(ctx context.Context, cert *x509.Certificate) {
	cfg := c.cfg
	host, _, port, ok := cfg.WebListen()
	if !ok {
		return
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	scheme := "http"
	client := http.DefaultClient
	if cfg.WebTLS() {
		scheme = "https"
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // the page's own certificate, pinned below when doctor could read it
			VerifyConnection: func(cs tls.ConnectionState) error {
				if cert != nil && (len(cs.PeerCertificates) == 0 || !cs.PeerCertificates[0].Equal(cert)) {
					return errors.New("the daemon serves another certificate than the one on disk (restart it after replacing the files)")
				}
				return nil
			}}}}
	}
	url := scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err != nil && strings.Contains(err.Error(), "another certificate") {
		c.add("daemon", Warn, "systemctl restart scanwarden", "%s: %v", url, err)
		return
	}
	if err != nil {
		c.add("daemon", Warn, "systemctl start scanwarden; journalctl -u scanwarden says why it stopped",
			"nothing answers %s: the daemon is not running (or listens elsewhere)", url)
		return
	}
	defer resp.Body.Close()
	b := make([]byte, 200)
	n, _ := resp.Body.Read(b)
	body := strings.TrimSpace(string(b[:n]))
	switch {
	case resp.StatusCode != http.StatusOK:
		c.add("daemon", Fail, "journalctl -u scanwarden", "%s answered %s", url, resp.Status)
	case strings.Contains(body, "fault"):
		c.add("daemon", Warn, "the status page and journalctl -u scanwarden name the part that is down", "the daemon answers %s: %s", url, body)
	default:
		c.add("daemon", OK, "", "the daemon answers %s: %s", url, body)
	}
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
