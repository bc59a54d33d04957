package snmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/scanwarden/scanwarden/internal/connlimit"
	"github.com/scanwarden/scanwarden/internal/loglimit"
)

// MailListenerConfig configures the SMTP listener. Zero means zero:
// DefaultMailListenerConfig gives the usual values.
type MailListenerConfig struct {
	Addr   string `json:"addr"`   // e.g. ":2525"
	Domain string `json:"domain"` // EHLO name
	// Allow are networks (a mail relay) whose connections are taken besides
	// AllowFrom's addresses; their mail is matched to a device by the
	// sender or the serial it quotes, and stored as unverified when it
	// matches none. Every other address is refused at connect (554).
	Allow []netip.Prefix `json:"allow"`
	// AllowFrom says whether an address is a watched device (the Watcher
	// sets it): its mail is that device's. nil: no device.
	AllowFrom func(netip.Addr) bool `json:"-"`
	// Timeout bounds each command and reply; SessionTimeout the whole
	// session, however busy the peer keeps it.
	Timeout        time.Duration `json:"timeout"`
	SessionTimeout time.Duration `json:"session_timeout"`
	// MaxConns sessions at once, MaxConnsPerAddr of them from one address;
	// more are answered 421 and closed.
	MaxConns        int `json:"max_conns"`
	MaxConnsPerAddr int `json:"max_conns_per_addr"`
}

// DefaultMailListenerConfig returns the usual values for a listener on addr.
func DefaultMailListenerConfig(addr string) MailListenerConfig {
	return MailListenerConfig{Addr: addr, Domain: "scanwarden", Timeout: 30 * time.Second, SessionTimeout: 2 * time.Minute,
		MaxConns: 32, MaxConnsPerAddr: 4}
}

// Validate names the first bad field.
func (c MailListenerConfig) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("mail listener: addr is empty")
	case c.Domain == "":
		return errors.New("mail listener: domain is empty")
	case c.Timeout <= 0:
		return fmt.Errorf("mail listener: timeout %s: must be positive", c.Timeout)
	case c.SessionTimeout < c.Timeout:
		return fmt.Errorf("mail listener: session_timeout %s: at least timeout (%s)", c.SessionTimeout, c.Timeout)
	case c.MaxConns < 1:
		return fmt.Errorf("mail listener: max_conns %d: at least 1", c.MaxConns)
	case c.MaxConnsPerAddr < 1 || c.MaxConnsPerAddr > c.MaxConns:
		return fmt.Errorf("mail listener: max_conns_per_addr %d: 1..max_conns (%d)", c.MaxConnsPerAddr, c.MaxConns)
	}
	return nil
}

// MailListener is an SMTP server that accepts the devices' job-log
// e-mails: only from allowed addresses, a bounded number of sessions (in
// all and per address), each bounded in time and message size.
type MailListener struct {
	cfg   MailListenerConfig
	rules *Rules
	rec   *Recorder
	index *DeviceIndex // the recorder's
	log   *slog.Logger
	junk  *loglimit.Limiter
	now   func() time.Time

	srv    *smtp.Server
	ln     *connlimit.Listener
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	stats MailStats
}

// NewMailListener returns a listener; Open binds it.
func NewMailListener(cfg MailListenerConfig, rules *Rules, rec *Recorder, log *slog.Logger) (*MailListener, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log, err := partLog("mail listener", "snmp.mail", rules, rec, log)
	if err != nil {
		return nil, err
	}
	return &MailListener{cfg: cfg, rules: rules, rec: rec, index: rec.index, log: log, junk: loglimit.New(log, 10*time.Second),
		now: time.Now}, nil
}

// Open binds and serves until Close or ctx ends.
func (m *MailListener) Open(ctx context.Context) error {
	if m.srv != nil {
		return errors.New("mail listener already open")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", m.cfg.Addr)
	if err != nil {
		return fmt.Errorf("mail listener: listen %s: %w", m.cfg.Addr, err)
	}
	m.ln = connlimit.New(ln, func(peer netip.Addr, open, fromPeer int) (string, bool) {
		if reply := m.admit(peer, open, fromPeer); reply != "" {
			return reply + "\r\n", false
		}
		return "", true
	}, m.cfg.SessionTimeout)
	ctx, m.cancel = context.WithCancel(ctx)
	srv := smtp.NewServer(&mailBackend{m: m, ctx: ctx})
	srv.Domain = m.cfg.Domain
	srv.ReadTimeout = m.cfg.Timeout
	srv.WriteTimeout = m.cfg.Timeout
	srv.MaxMessageBytes = maxMailBytes
	srv.MaxRecipients = 10
	srv.ErrorLog = slogPrinter{m.log}
	m.srv = srv
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		if err := srv.Serve(m.ln); err != nil && !errors.Is(err, smtp.ErrServerClosed) && ctx.Err() == nil {
			m.log.Error("serve", "err", err)
		}
	}()
	go func() {
		defer m.wg.Done()
		<-ctx.Done()
		m.ln.Shut()
	}()
	return nil
}

// Addr is the bound address.
func (m *MailListener) Addr() net.Addr { return m.ln.Addr() }

// Close stops the server: the socket and every session are closed (even
// ones the server has not registered yet, and even when Serve has not
// started), and Close waits for the sessions to end.
func (m *MailListener) Close() error {
	if m.srv == nil {
		return nil
	}
	m.cancel()
	m.srv.Close()
	m.ln.Shut()
	m.wg.Wait()
	m.ln.Wait()
	m.srv = nil
	return nil
}

// MailStats are the listener's counters.
type MailStats struct {
	Connections int `json:"connections"` // sessions taken
	NotAllowed  int `json:"not_allowed"` // connections refused: address not allowed (554)
	Busy        int `json:"busy"`        // connections refused: too many at once, in all or from the address (421)
	Messages    int `json:"messages"`
	Oversize    int `json:"oversize"`   // refused with 552: larger than the limit
	Malformed   int `json:"malformed"`  // refused with 554: not a mail we understand
	Unmatched   int `json:"unmatched"`  // matched to no known device (stored as unverified)
	Unverified  int `json:"unverified"` // events stored as unverified
	Events      int `json:"events"`
	NewEvents   int `json:"new_events"`
}

// Stats returns the counters.
func (m *MailListener) Stats() MailStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stats
}

func (m *MailListener) count(f func(*MailStats)) {
	m.mu.Lock()
	f(&m.stats)
	m.mu.Unlock()
}

// admit says whether a connection from peer may open a session now with
// open sessions in all and from peer; the refusal is an SMTP reply.
func (m *MailListener) admit(peer netip.Addr, open, fromPeer int) string {
	if !m.allowed(peer) {
		m.count(func(s *MailStats) { s.NotAllowed++ })
		m.junk.Warn("not allowed", "SMTP connection from an address not allowed", "peer", peer.String())
		return "554 5.7.1 scanwarden: this address may not send here"
	}
	if open >= m.cfg.MaxConns || fromPeer >= m.cfg.MaxConnsPerAddr {
		m.count(func(s *MailStats) { s.Busy++ })
		m.junk.Warn("busy", "SMTP connection refused: too many sessions", "peer", peer.String(), "open", open, "from_peer", fromPeer)
		return "421 4.7.0 scanwarden: too many connections, try again later"
	}
	m.count(func(s *MailStats) { s.Connections++ })
	return ""
}

func (m *MailListener) isDevice(a netip.Addr) bool {
	return m.cfg.AllowFrom != nil && m.cfg.AllowFrom(a)
}

func (m *MailListener) allowed(a netip.Addr) bool {
	if m.isDevice(a) {
		return true
	}
	for _, p := range m.cfg.Allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// match names the device a mail comes from and whether that is verified:
// a watched device's own address is its proof (the device quoted, when it
// has that address, else the device at the address); mail through an
// allowed relay is matched by sender or serial; anything else is kept
// under the sender's address, unverified.
func (m *MailListener) match(sender string, peer netip.Addr, serial string) (device, how string, verified bool) {
	dev, how := m.index.Lookup(sender, netip.Addr{}, serial)
	if m.isDevice(peer) {
		if dev != "" && sameIP(dev, peer) {
			return dev, how, true
		}
		if d, ok := m.index.ByIP(peer); ok {
			return d, "ip", true
		}
	}
	if dev != "" && m.allowed(peer) {
		return dev, how, true
	}
	return "mail:" + cleanString(sender), "none", false
}

// sameIP says whether the device address host:port is at ip.
func sameIP(device string, ip netip.Addr) bool {
	host, _, err := net.SplitHostPort(device)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap() == ip.Unmap()
}

// Accept handles one message as received from peer with envelope sender
// from (the SMTP session calls it; tests may too).
func (m *MailListener) Accept(ctx context.Context, from string, peer netip.Addr, r io.Reader) error {
	m.count(func(s *MailStats) { s.Messages++ })
	pm, err := ParseMail(r)
	if err != nil {
		m.count(func(s *MailStats) { s.Malformed++ })
		return fmt.Errorf("from %s (%s): %w", cleanString(from), peer, err)
	}
	sender := pm.From
	if sender == "" {
		sender = strings.ToLower(from)
	}
	device, how, verified := m.match(sender, peer, pm.Serial)
	if how == "none" {
		m.count(func(s *MailStats) { s.Unmatched++ })
	}
	for _, ev := range MailEvents(pm, device, m.rules, m.now()) {
		ev.Detail["matched_by"] = how
		ev.Detail["peer"] = peer.String()
		ev.Unverified = !verified
		fresh, err := m.rec.Event(ctx, ev)
		if err != nil {
			return fmt.Errorf("record mail event: %w", err)
		}
		m.count(func(s *MailStats) {
			s.Events++
			if fresh {
				s.NewEvents++
			}
			if !verified {
				s.Unverified++
			}
		})
	}
	return nil
}

type mailBackend struct {
	m   *MailListener
	ctx context.Context
}

func (b *mailBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	var peer netip.Addr
	if ap, err := netip.ParseAddrPort(c.Conn().RemoteAddr().String()); err == nil {
		peer = ap.Addr().Unmap()
	}
	return &mailSession{m: b.m, ctx: b.ctx, peer: peer}, nil
}

type mailSession struct {
	m    *MailListener
	ctx  context.Context
	peer netip.Addr
	from string
}

func (s *mailSession) Reset()        { s.from = "" }
func (s *mailSession) Logout() error { return nil }
func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *mailSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *mailSession) Data(r io.Reader) error {
	// The whole message first (go-smtp stops it at maxMailBytes): an
	// oversize one is refused with 552 and nothing of it is kept.
	b, err := io.ReadAll(r)
	if errors.Is(err, smtp.ErrDataTooLarge) {
		s.m.count(func(st *MailStats) { st.Oversize++ })
		s.m.junk.Warn("oversize", "mail larger than the limit refused", "peer", s.peer.String(), "limit", maxMailBytes)
		return smtp.ErrDataTooLarge
	}
	if err != nil {
		return err
	}
	err = s.m.Accept(s.ctx, s.from, s.peer, bytes.NewReader(b))
	if err != nil {
		s.m.junk.Warn("malformed", "mail not understood", "peer", s.peer.String(), "err", err)
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "message not understood"}
	}
	return nil
}

// slogPrinter adapts slog to go-smtp's Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) { p.l.Warn(fmt.Sprintf(format, v...)) }
func (p slogPrinter) Println(v ...any)               { p.l.Warn(fmt.Sprint(v...)) }
