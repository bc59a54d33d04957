package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/internal/webcert"
	"github.com/scanwarden/scanwarden/web"
)

// webPart is the web site and its listener: the certificate, the
// connection caps, the HTTP server (and, on an HTTPS port, the plain-HTTP
// redirect beside it). A port that cannot be bound at start is fatal
// (*BindError): a daemon without its page is not left running.
type webPart struct {
	log    *slog.Logger
	faults *faults
	cert   *webcert.Keeper // the page's certificate; nil: plain HTTP
	limit  *webLimit       // the listener's connection caps
	site   *web.Server

	srv      *http.Server
	redirect *http.Server // plain HTTP on the HTTPS port: redirects only
	mu       sync.Mutex
	ln       net.Listener // nil until bound
	wg       sync.WaitGroup
}

// openWeb builds the site (package web: pages, API, /healthz, /metrics
// behind its auth, /debug/pprof) over the daemon's backends and serves it.
func (m *Main) openWeb(cfg config.Config) error {
	b, reg := webBackend{m}, webRegistry{m}
	wc := web.Config{Auth: m.st.Auth(), Fleet: b, Checker: b, Incidents: b, Events: b, Status: b, Summary: b, CheckAll: b, Warnings: b,
		Editor: reg, Profiles: reg, DeviceManager: reg, DestinationManager: reg,
		Importer: webImporter{m}, Settings: settingsBackend{m},
		Receiver: webReceiver{m.st, filepath.Join(cfg.DataDir, "receiver")},
		Metrics:  m.metrics.Handler(), Logger: m.web.log, TLS: m.web.cert != nil, Authenticated: m.web.limit.trust,
		SetupDone: func() { RemoveSetupLink(cfg.DataDir) }, Hosts: webHosts(cfg)}
	if m.recv != nil {
		wc.Receiver = m.recv.backend() // the running receiver: deliver and force too
	}
	site, err := web.New(wc)
	if err != nil {
		return err
	}
	return m.web.Open(cfg.Listen, site)
}

// Open serves site on listen (a *BindError when it cannot be bound).
func (p *webPart) Open(listen string, site *web.Server) error {
	p.site = site
	errLog := slog.NewLogLogger(p.log.With("component", "http").Handler(), slog.LevelWarn)
	p.srv = &http.Server{Handler: site.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: errLog}
	if p.cert != nil {
		p.srv.TLSConfig = p.cert.TLSConfig()
		p.redirect = &http.Server{Handler: http.HandlerFunc(toHTTPS), ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout: 10 * time.Second, ErrorLog: errLog}
	}
	if err := p.listen(listen); err != nil {
		return bindError("listen", "tcp", listen, err)
	}
	return nil
}

// Addr is the web listener's address (nil before Open or while its port
// cannot be bound).
func (m *Main) Addr() net.Addr {
	if m.web == nil {
		return nil
	}
	return m.web.Addr()
}

// Addr is the listener's address (nil: not bound).
func (p *webPart) Addr() net.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return nil
	}
	return p.ln.Addr()
}

func (p *webPart) listen(addr string) error {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var ln net.Listener = p.limit.wrap(tcp, p.cert != nil)
	if p.cert != nil {
		// One port: TLS handshakes to the site, plain HTTP to a redirect.
		split := splitTLS(ln)
		ln = tls.NewListener(split.tls, p.srv.TLSConfig)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.redirect.Serve(split.plain)
		}()
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.faults.set("web", err.Error())
			p.log.Error("web server", "err", err)
		}
	}()
	return nil
}

// Close stops taking requests and waits for the running ones until 2 s
// have passed or deadline, whichever is first.
func (p *webPart) Close(deadline time.Time) {
	if p == nil || p.srv == nil {
		return
	}
	if d := time.Now().Add(2 * time.Second); d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	p.srv.Shutdown(ctx) // first: its listener's close ends the redirect's too
	if p.redirect != nil {
		p.redirect.Shutdown(ctx)
	}
	p.site.Close()
	p.wg.Wait()
}

// announceSetup writes the one-time setup link (no admin password yet) to
// the data dir's setup-link file and says on w where it is: the link is a
// secret and the log is read by more people than root.
func (p *webPart) announceSetup(ctx context.Context, w io.Writer, cfg config.Config) {
	link, err := p.site.SetupLink(ctx)
	if err != nil {
		p.log.Error("admin setup link", "err", err)
		return
	}
	if link == "" {
		RemoveSetupLink(cfg.DataDir)
		return
	}
	var listen net.Addr = &net.TCPAddr{}
	if a := p.Addr(); a != nil {
		listen = a
	} else if _, ip, port, ok := cfg.WebListen(); ok && ip.IsValid() {
		if n, err := strconv.ParseUint(port, 10, 16); err == nil {
			listen = net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(n)))
		}
	}
	scheme := "http"
	var cert *webcert.Cert
	if p.cert != nil {
		scheme, cert = "https", p.cert.Current()
	}
	urls := pageURLs(scheme, listen)
	file, err := writeSetupLink(cfg.DataDir, urls, link, cert, time.Now().Add(24*time.Hour))
	if err != nil {
		p.log.Error("admin setup link", "err", err)
		return
	}
	fp := ""
	if cert != nil {
		fp = fmt.Sprintf(" The page's certificate is self-signed: its SHA-256 fingerprint is %s — compare it with the browser's.", cert.Fingerprint())
		if !cert.SelfSigned {
			fp = fmt.Sprintf(" The page's certificate (%s) has the SHA-256 fingerprint %s.", cert.CertFile, cert.Fingerprint())
		}
	}
	if loopbackOnly(listen) && isTerminal(w) {
		// Run by hand on loopback: only this box reaches the page, and
		// the console is the admin's own, not a log others read.
		fmt.Fprintf(w, "No admin password yet. Open this one-time link (valid 24 h) to set it:\n  %s%s\n"+
			"(also in %s; or set the password with `scanwarden admin set-password`).%s\n", urls[0], link, file, fp)
		return
	}
	fmt.Fprintf(w, "No admin password yet. The page is at %s. The one-time setup link (valid 24 h) is in %s, "+
		"readable by root and the daemon's user only: run `sudo scanwarden admin setup-link --data-dir %s` to print it "+
		"(or set the password with `scanwarden admin set-password`).%s\n", strings.Join(urls, " "), file, cfg.DataDir, fp)
}

// loopbackOnly reports whether the page listens on a loopback address only.
func loopbackOnly(listen net.Addr) bool {
	ap, err := netip.ParseAddrPort(listen.String())
	return err == nil && ap.Addr().IsLoopback()
}

// isTerminal reports whether w is a terminal (serve run by hand), not a
// pipe, a file or systemd's journal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
