package ad

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	ber "github.com/go-asn1-ber/asn1-ber"
	"github.com/go-ldap/ldap/v3"
)

// endpoint is one DC to try.
type endpoint struct {
	host, port string
	ldaps      bool   // TLS from the first byte (else StartTLS or plain)
	from       string // "url" or "srv"
}

func (e endpoint) addr() string { return net.JoinHostPort(e.host, e.port) }

// endpoints lists the DCs to try, from the URL or from DNS SRV.
func (d *Directory) endpoints(ctx context.Context) ([]endpoint, error) {
	if d.cfg.URL != "" {
		u, err := url.Parse(d.cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("ad url %q: %w", d.cfg.URL, err)
		}
		ep := endpoint{host: u.Hostname(), port: u.Port(), ldaps: u.Scheme == "ldaps", from: "url"}
		if ep.port == "" {
			ep.port = "389"
			if ep.ldaps {
				ep.port = "636"
			}
		}
		return []endpoint{ep}, nil
	}
	_, srvs, err := d.cfg.Resolver.LookupSRV(ctx, "ldap", "tcp", d.cfg.Domain)
	if err != nil {
		return nil, fmt.Errorf("discover a DC: SRV _ldap._tcp.%s: %w", d.cfg.Domain, err)
	}
	var eps []endpoint
	var outside []string
	for _, s := range srvs { // sorted by priority, shuffled by weight
		host := strings.TrimSuffix(s.Target, ".")
		if host == "" {
			continue
		}
		// DNS may be answered by anyone on the path: a DC outside the
		// domain is not taken (and the one taken must still pass TLS
		// verification under its own name).
		if !inDomain(host, d.cfg.Domain) {
			outside = append(outside, host)
			d.log.Warn("SRV record names a DC outside the AD domain: not used", "dc", host, "domain", d.cfg.Domain)
			continue
		}
		eps = append(eps, endpoint{host: host, port: fmt.Sprint(s.Port), from: "srv"})
	}
	if len(eps) == 0 && len(outside) > 0 {
		return nil, fmt.Errorf("discover a DC: SRV _ldap._tcp.%s lists only DCs outside the domain (%s): not used; give the DC's URL (ad.url) if that is right",
			d.cfg.Domain, strings.Join(outside, ", "))
	}
	if len(eps) == 0 {
		return nil, fmt.Errorf("discover a DC: SRV _ldap._tcp.%s lists no DC", d.cfg.Domain)
	}
	return eps, nil
}

// inDomain says whether the DNS name host is domain or inside it.
func inDomain(host, domain string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	return domain != "" && (host == domain || strings.HasSuffix(host, "."+domain))
}

// session is one bound connection to a DC, alive within one context.
type session struct {
	l         *ldap.Conn
	ep        endpoint
	transport string // "ldaps", "starttls" or "plain"
	ctx       context.Context
	stop      func() bool
}

// connect binds to the first DC that answers. Only a DC that cannot be
// reached makes it try the next; a TLS or bind failure is the answer.
func (d *Directory) connect(ctx context.Context) (*session, error) {
	eps, err := d.endpoints(ctx)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ep := range eps {
		s, err := d.dial(ctx, ep)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" || ctx.Err() != nil {
			break
		}
		d.log.Info("DC unreachable, trying the next", "dc", ep.addr(), "err", err)
	}
	if len(errs) == 1 {
		return nil, errs[0]
	}
	return nil, fmt.Errorf("no DC of %s answered: %w", d.cfg.Domain, errors.Join(errs...))
}

func (d *Directory) tlsConfig(host string) *tls.Config {
	return &tls.Config{ServerName: host, RootCAs: d.roots, MinVersion: tls.VersionTLS12}
}

func (d *Directory) dial(ctx context.Context, ep endpoint) (*session, error) {
	addr := ep.addr()
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to DC %s: %w", addr, err)
	}
	// The deadline bounds every read and write; a cancelled context
	// unblocks them at once. go-ldap itself takes no context.
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*session, error) {
		stop()
		raw.Close()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, err
	}

	conn, transport := net.Conn(raw), "plain"
	switch {
	case ep.ldaps:
		transport = "ldaps"
	case !d.Plain():
		transport = "starttls"
		if err := startTLS(raw); err != nil {
			return fail(fmt.Errorf("StartTLS with DC %s: %w", addr, err))
		}
	}
	if transport != "plain" {
		tc := tls.Client(raw, d.tlsConfig(ep.host))
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(fmt.Errorf("TLS with DC %s: %w", addr, tlsHint(err, ep.host, d.cfg.CAFile)))
		}
		conn = tc
	}

	l := ldap.NewConn(conn, transport != "plain")
	l.Start()
	if dl, ok := ctx.Deadline(); ok {
		l.SetTimeout(time.Until(dl))
	}
	s := &session{l: l, ep: ep, transport: transport, ctx: ctx, stop: stop}
	if _, err := l.SimpleBind(ldap.NewSimpleBindRequest(d.cfg.BindUser, d.cfg.Password.Reveal(), nil)); err != nil {
		l.Close()
		return fail(newBindError(addr, d.cfg.BindUser, err))
	}
	return s, nil
}

// close ends the session politely (unbind) and releases the context hook.
func (s *session) close() {
	s.l.Unbind()
	s.l.Close()
	s.stop()
}

// search runs one request; op names it in errors.
func (s *session) search(op string, req *ldap.SearchRequest) (*ldap.SearchResult, error) {
	res, err := s.l.Search(req)
	if err != nil {
		if s.ctx.Err() != nil {
			return nil, fmt.Errorf("%s on DC %s: %w: %w", op, s.ep.addr(), s.ctx.Err(), err)
		}
		return res, fmt.Errorf("%s on DC %s: %w", op, s.ep.addr(), err)
	}
	return res, nil
}

// base reads one object's attributes; nil when it does not exist.
func (s *session) base(op, dn string, attrs ...string) (*ldap.Entry, error) {
	req := ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
		"(objectClass=*)", attrs, nil)
	res, err := s.search(op, req)
	if err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
			return nil, nil
		}
		return nil, err
	}
	if len(res.Entries) == 0 {
		return nil, nil
	}
	return res.Entries[0], nil
}

const startTLSOID = "1.3.6.1.4.1.1466.20037"

// maxStartTLSResponse bounds the one message read before TLS starts.
const maxStartTLSResponse = 64 << 10

// startTLS sends the StartTLS extended request (RFC 4511 4.14) on a fresh
// connection and reads its response, before go-ldap owns the connection, so
// that the TLS handshake runs with the context and its errors keep their
// type.
func startTLS(conn net.Conn) error {
	p := ber.Encode(ber.ClassUniversal, ber.TypeConstructed, ber.TagSequence, nil, "LDAP Request")
	p.AppendChild(ber.NewInteger(ber.ClassUniversal, ber.TypePrimitive, ber.TagInteger, int64(1), "MessageID"))
	req := ber.Encode(ber.ClassApplication, ber.TypeConstructed, ldap.ApplicationExtendedRequest, nil, "Start TLS")
	req.AppendChild(ber.NewString(ber.ClassContext, ber.TypePrimitive, 0, startTLSOID, "TLS Extended Command"))
	p.AppendChild(req)
	if _, err := conn.Write(p.Bytes()); err != nil {
		return err
	}
	msg, err := readBERMessage(conn, maxStartTLSResponse)
	if err != nil {
		return fmt.Errorf("reading the response: %w", err)
	}
	resp, err := ber.DecodePacketErr(msg)
	if err != nil {
		return fmt.Errorf("decoding the response: %w", err)
	}
	return ldap.GetLDAPError(resp)
}

// readBERMessage reads one BER element (definite length) of at most max bytes.
func readBERMessage(r io.Reader, max int) ([]byte, error) {
	hdr := make([]byte, 2, 8)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	length := int(hdr[1])
	if hdr[1]&0x80 != 0 {
		n := int(hdr[1] & 0x7f)
		if n == 0 || n > 4 {
			return nil, fmt.Errorf("BER length of %d bytes", n)
		}
		lb := make([]byte, n)
		if _, err := io.ReadFull(r, lb); err != nil {
			return nil, err
		}
		hdr = append(hdr, lb...)
		length = 0
		for _, c := range lb {
			length = length<<8 | int(c)
		}
	}
	if length > max {
		return nil, fmt.Errorf("message of %d bytes, more than %d", length, max)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return append(hdr, body...), nil
}
