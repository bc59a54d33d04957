package daemon

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/webcert"
)

// HSTS and the Secure cookie come from web.Config.TLS; here: which
// certificate, one port for both protocols, and the setup link.

// openCert is the web certificate for cfg: the admin's own files, else the
// box's self-signed one in dataDir (made or renewed now when needed).
func openCert(log *slog.Logger, cfg config.Config, dataDir string) (*webcert.Keeper, error) {
	var k *webcert.Keeper
	if cfg.Web.CertFile != "" {
		var err error
		if k, err = webcert.NewFiles(cfg.Web.CertFile, cfg.Web.KeyFile, time.Now); err != nil {
			return nil, fmt.Errorf("web.cert_file/web.key_file: %w", err)
		}
	} else {
		_, listenIP, _, _ := cfg.WebListen()
		names, err := webcert.BoxNames(listenIP)
		if err != nil {
			log.Warn("the self-signed certificate names only what could be read", "err", err)
		}
		var made bool
		if k, made, err = webcert.NewSelfSigned(dataDir, names, time.Now); err != nil {
			return nil, fmt.Errorf("web certificate in %s: %w", dataDir, err)
		}
		c := k.Current()
		if made {
			log.Info("made a self-signed web certificate", "file", c.CertFile, "sha256", c.Fingerprint(),
				"names", strings.Join(c.Leaf.DNSNames, ","), "addresses", fmt.Sprint(c.Leaf.IPAddresses), "expires", c.Leaf.NotAfter.Format(time.DateOnly))
		}
	}
	k.OnChange = func(c *webcert.Cert, err error) {
		if err != nil {
			log.Error("web certificate", "err", err)
			return
		}
		log.Info("web certificate renewed", "file", c.CertFile, "sha256", c.Fingerprint(), "expires", c.Leaf.NotAfter.Format(time.DateOnly))
	}
	return k, nil
}

// protoSplit divides one listener's connections by their first byte: a TLS
// handshake (0x16) to TLS, anything else to Plain (which only redirects).
// A connection that sends nothing within 10 s is closed. Closing either
// side closes the listener.
type protoSplit struct {
	ln          net.Listener
	tls, plain  *splitSide
	done        chan struct{}
	closeOnce   sync.Once
	acceptErr   error
	acceptErrMu sync.Mutex
}

type splitSide struct {
	p     *protoSplit
	conns chan net.Conn
}

func splitTLS(ln net.Listener) *protoSplit {
	p := &protoSplit{ln: ln, done: make(chan struct{})}
	p.tls = &splitSide{p: p, conns: make(chan net.Conn)}
	p.plain = &splitSide{p: p, conns: make(chan net.Conn)}
	go p.loop()
	return p
}

func (p *protoSplit) loop() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			p.acceptErrMu.Lock()
			p.acceptErr = err
			p.acceptErrMu.Unlock()
			p.close()
			return
		}
		go p.classify(c)
	}
}

func (p *protoSplit) classify(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(c, 512)
	first, err := br.Peek(1)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	side := p.plain
	if first[0] == 0x16 {
		side = p.tls
	}
	select {
	case side.conns <- &peekedConn{Conn: c, r: br}:
	case <-p.done:
		c.Close()
	}
}

func (p *protoSplit) close() error {
	var err error
	p.closeOnce.Do(func() {
		close(p.done)
		err = p.ln.Close()
	})
	return err
}

func (s *splitSide) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.p.done:
		s.p.acceptErrMu.Lock()
		defer s.p.acceptErrMu.Unlock()
		if s.p.acceptErr != nil {
			return nil, s.p.acceptErr
		}
		return nil, net.ErrClosed
	}
}

func (s *splitSide) Close() error   { return s.p.close() }
func (s *splitSide) Addr() net.Addr { return s.p.ln.Addr() }

// peekedConn reads the bytes peeked at first.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// toHTTPS answers plain HTTP on the HTTPS port: every request is sent to
// the same host and path over https (302: no browser keeps it, should TLS
// be turned off later); nothing else is served.
func toHTTPS(w http.ResponseWriter, r *http.Request) {
	u := url.URL{Scheme: "https", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	if r.Host == "" {
		http.Error(w, "this port speaks HTTPS", http.StatusBadRequest)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// SetupLinkName is the file in the data dir that holds the one-time setup
// link while no admin password is set (mode 0600: root and the daemon's
// user only). `scanwarden admin setup-link` prints it.
const SetupLinkName = "setup-link"

// pageURLs are the addresses a PC opens the page at: the listen address,
// or — when it is every address (0.0.0.0, ::) — the box's name and its
// addresses but loopback and link-local ones.
func pageURLs(scheme string, listen net.Addr) []string {
	host, port, err := net.SplitHostPort(listen.String())
	if err != nil {
		return []string{scheme + "://" + listen.String()}
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsUnspecified() {
		return []string{scheme + "://" + net.JoinHostPort(host, port)}
	}
	var out []string
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		out = append(out, scheme+"://"+net.JoinHostPort(strings.ToLower(h), port))
	}
	if names, err := webcert.BoxNames(); err == nil {
		ips := slices.Clone(names.IPs)
		slices.SortFunc(ips, func(a, b netip.Addr) int { return a.Compare(b) })
		for _, a := range ips {
			if a.IsLoopback() || (ip.Is4() && !a.Is4()) {
				continue
			}
			out = append(out, scheme+"://"+net.JoinHostPort(a.String(), port))
		}
	}
	if len(out) == 0 {
		out = append(out, scheme+"://"+net.JoinHostPort(host, port))
	}
	return out
}

// writeSetupLink puts the one-time link (at every address of the page) and
// the certificate's fingerprint into dataDir/setup-link, mode 0600, and
// returns the file's path.
func writeSetupLink(dataDir string, urls []string, path string, cert *webcert.Cert, expires time.Time) (string, error) {
	var b strings.Builder
	b.WriteString("# scanwarden: the one-time link that sets the web admin's password.\n")
	fmt.Fprintf(&b, "# It works once, until %s, while the daemon that wrote it runs and no password is set.\n",
		expires.UTC().Format("2006-01-02 15:04 MST"))
	for _, u := range urls {
		b.WriteString(u + path + "\n")
	}
	if cert != nil {
		fmt.Fprintf(&b, "# The page's certificate (self-signed: compare this with what the browser shows before you go on):\n")
		fmt.Fprintf(&b, "# SHA-256 fingerprint %s\n", cert.Fingerprint())
	}
	file := filepath.Join(dataDir, SetupLinkName)
	tmp := file + ".new"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return "", fmt.Errorf("write the setup link: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return "", fmt.Errorf("write the setup link: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return "", fmt.Errorf("write the setup link: %w", err)
	}
	return file, nil
}

// RemoveSetupLink deletes the setup-link file (the password is set).
func RemoveSetupLink(dataDir string) {
	os.Remove(filepath.Join(dataDir, SetupLinkName))
}
