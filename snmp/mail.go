package snmp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/scanwarden/scanwarden/internal/connlimit"
	"github.com/scanwarden/scanwarden/internal/loglimit"
)

// Bounds on a device e-mail.
const (
	maxMailBytes = 1 << 20
	maxMailParts = 16
	maxMailLines = 2000
)

// ParsedMail is what a device's job-log or send-result e-mail says.
type ParsedMail struct {
	MessageID string
	From      string // address only, lower case
	Subject   string
	Date      time.Time
	Serial    string   // a serial number quoted in the body, if any
	Lines     []string // cleaned text lines of the text parts
}

var (
	serialLine = regexp.MustCompile(`(?i)\bserial(?:\s*(?:no\.?|number))?\s*[:=]\s*([A-Za-z0-9-]{4,32})`)
)

// ParseMail reads one RFC 5322 message: headers, then text/plain parts
// (multipart, base64 and quoted-printable handled, HTML parts ignored).
// Errors name the header or part that was wrong.
func ParseMail(r io.Reader) (ParsedMail, error) {
	msg, err := mail.ReadMessage(bufio.NewReader(io.LimitReader(r, maxMailBytes)))
	if err != nil {
		return ParsedMail{}, fmt.Errorf("mail: headers: %w", err)
	}
	var pm ParsedMail
	dec := new(mime.WordDecoder)
	if from := msg.Header.Get("From"); from != "" {
		a, err := mail.ParseAddress(from)
		if err != nil {
			return ParsedMail{}, fmt.Errorf("mail: From header: %w", err)
		}
		pm.From = strings.ToLower(a.Address)
	}
	pm.MessageID = cleanString(msg.Header.Get("Message-Id"))
	if s, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		pm.Subject = cleanString(s)
	} else {
		pm.Subject = cleanString(msg.Header.Get("Subject"))
	}
	if d, err := msg.Header.Date(); err == nil {
		pm.Date = d
	}
	var texts [][]byte
	if err := collectText(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, &texts, 0); err != nil {
		return ParsedMail{}, err
	}
	for _, t := range texts {
		sc := bufio.NewScanner(bytes.NewReader(t))
		sc.Buffer(make([]byte, 0, 4096), 64*1024)
		for sc.Scan() && len(pm.Lines) < maxMailLines {
			line := CleanText(sc.Bytes())
			if line == "" {
				continue
			}
			pm.Lines = append(pm.Lines, line)
			if pm.Serial == "" {
				if m := serialLine.FindStringSubmatch(line); m != nil {
					pm.Serial = m[1]
				}
			}
		}
		if err := sc.Err(); err != nil {
			return ParsedMail{}, fmt.Errorf("mail: body: %w", err)
		}
	}
	if pm.Subject != "" && len(pm.Lines) < maxMailLines {
		pm.Lines = append([]string{pm.Subject}, pm.Lines...)
	}
	return pm, nil
}

func collectText(ctype, cte string, body io.Reader, out *[][]byte, depth int) error {
	if depth > 3 {
		return errors.New("mail: multipart nested deeper than 3")
	}
	media := "text/plain"
	var params map[string]string
	if ctype != "" {
		var err error
		media, params, err = mime.ParseMediaType(ctype)
		if err != nil {
			return fmt.Errorf("mail: Content-Type %q: %w", cleanString(ctype), err)
		}
	}
	switch {
	case strings.HasPrefix(media, "multipart/"):
		boundary := params["boundary"]
		if boundary == "" {
			return errors.New("mail: multipart without boundary")
		}
		mr := multipart.NewReader(body, boundary)
		for i := 0; ; i++ {
			if i >= maxMailParts {
				return fmt.Errorf("mail: more than %d parts", maxMailParts)
			}
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("mail: part %d: %w", i+1, err)
			}
			err = collectText(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, out, depth+1)
			p.Close()
			if err != nil {
				return fmt.Errorf("mail: part %d: %w", i+1, err)
			}
		}
	case media == "text/plain":
		var r io.Reader = body
		switch strings.ToLower(strings.TrimSpace(cte)) {
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, body) // it ignores CR and LF itself
		case "quoted-printable":
			r = quotedprintable.NewReader(body)
		}
		b, err := io.ReadAll(io.LimitReader(r, maxMailBytes))
		if err != nil {
			return fmt.Errorf("mail: text part (%s): %w", cleanString(cte), err)
		}
		*out = append(*out, b)
		return nil
	default:
		_, err := io.Copy(io.Discard, io.LimitReader(body, maxMailBytes))
		return err
	}
}

// MailEvents finds send failures in a parsed e-mail: every line a rule
// matches gives one event (one per code). The destination is the line's
// UNC path, else the first one in the message.
func MailEvents(pm ParsedMail, device string, rules *Rules, now time.Time) []Event {
	msgDest := ""
	for _, l := range pm.Lines {
		if d := findDestination(l); d != "" {
			msgDest = d
			break
		}
	}
	id := pm.MessageID
	if id == "" {
		id = pm.From + "|" + pm.Date.UTC().Format(time.RFC3339) + "|" + pm.Subject
	}
	evs := newReportEvents(device, rules, now)
	for _, l := range pm.Lines {
		ev, ok := evs.match(Observation{Source: SourceMail, Text: l})
		if !ok {
			continue
		}
		if ev.Destination == "" {
			ev.Destination = msgDest
		}
		ev.Key = eventKey(device, SourceMail, id, ev.Code)
		ev.Detail = map[string]string{"from": pm.From, "subject": pm.Subject, "message_id": pm.MessageID}
		evs.add(ev)
	}
	return evs.out
}

// DeviceIndex matches e-mails to devices: by configured sender address,
// by the serial number quoted in the body, or by the sending IP.
type DeviceIndex struct {
	mu      sync.RWMutex
	senders map[string]string
	serials map[string]string
	ips     map[netip.Addr]string
	named   map[netip.Addr]string // devices given by name, as last resolved (SetNamed)
}

// NewDeviceIndex returns an empty index.
func NewDeviceIndex() *DeviceIndex {
	return &DeviceIndex{senders: map[string]string{}, serials: map[string]string{}, ips: map[netip.Addr]string{},
		named: map[netip.Addr]string{}}
}

// SetSender says mail from address comes from device.
func (d *DeviceIndex) SetSender(address, device string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.senders[strings.ToLower(address)] = device
}

// Add indexes an inventoried device by serial and IP.
func (d *DeviceIndex) Add(inv Inventory) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if inv.Serial != "" {
		d.serials[strings.ToUpper(inv.Serial)] = inv.Address
	}
	if host, _, err := net.SplitHostPort(inv.Address); err == nil {
		if ip, err := netip.ParseAddr(host); err == nil {
			d.ips[ip.Unmap()] = inv.Address
		}
	}
}

// SetNamed replaces the devices given by name with named: each resolved
// address and its device. A device given by address stays indexed by it.
func (d *DeviceIndex) SetNamed(named map[netip.Addr]string) {
	m := make(map[netip.Addr]string, len(named))
	for ip, dev := range named {
		m[ip.Unmap()] = dev
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.named = m
}

// byIP is the device at ip: by its address, else by its resolved name.
// The caller holds mu.
func (d *DeviceIndex) byIP(ip netip.Addr) (string, bool) {
	if dev, ok := d.ips[ip.Unmap()]; ok {
		return dev, true
	}
	dev, ok := d.named[ip.Unmap()]
	return dev, ok
}

// ByIP returns the device indexed under ip (a device's polled address, its
// inventory or its resolved name), or false.
func (d *DeviceIndex) ByIP(ip netip.Addr) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.byIP(ip)
}

// Lookup returns the device and how it was matched ("sender", "serial",
// "ip"), or ("", "").
func (d *DeviceIndex) Lookup(from string, ip netip.Addr, serial string) (string, string) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if dev, ok := d.senders[strings.ToLower(from)]; ok {
		return dev, "sender"
	}
	if dev, ok := d.serials[strings.ToUpper(serial)]; ok && serial != "" {
		return dev, "serial"
	}
	if dev, ok := d.byIP(ip); ok {
		return dev, "ip"
	}
	return "", ""
}

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
	if rules == nil || rec == nil {
		return nil, errors.New("mail listener: rules and recorder are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "snmp.mail")
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
