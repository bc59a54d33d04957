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
			r = base64.NewDecoder(base64.StdEncoding, newlineStripper{body})
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

// newlineStripper drops CR and LF so base64 lines decode as one stream.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
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
	var out []Event
	seen := map[string]bool{}
	for _, l := range pm.Lines {
		m, ok := rules.Match(Observation{Source: SourceMail, Text: l})
		if !ok || m.Ignore || seen[m.Code] {
			continue
		}
		seen[m.Code] = true
		dest := findDestination(l)
		if dest == "" {
			dest = msgDest
		}
		out = append(out, Event{
			Device: device, Time: now, Code: m.Code, Text: l, Destination: dest, Source: SourceMail, Rule: m.Rule,
			Key:    eventKey(device, SourceMail, id, m.Code),
			Detail: map[string]string{"from": pm.From, "subject": pm.Subject, "message_id": pm.MessageID},
		})
	}
	return out
}

// DeviceIndex matches e-mails to devices: by configured sender address,
// by the serial number quoted in the body, or by the sending IP.
type DeviceIndex struct {
	mu      sync.RWMutex
	senders map[string]string
	serials map[string]string
	ips     map[netip.Addr]string
}

// NewDeviceIndex returns an empty index.
func NewDeviceIndex() *DeviceIndex {
	return &DeviceIndex{senders: map[string]string{}, serials: map[string]string{}, ips: map[netip.Addr]string{}}
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

// ByIP returns the device indexed under ip (a device's polled address or
// its inventory), or false.
func (d *DeviceIndex) ByIP(ip netip.Addr) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	dev, ok := d.ips[ip.Unmap()]
	return dev, ok
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
	if dev, ok := d.ips[ip.Unmap()]; ok {
		return dev, "ip"
	}
	return "", ""
}

// MailListenerConfig configures the SMTP listener.
type MailListenerConfig struct {
	Addr     string `json:"addr"`   // e.g. ":2525"
	Domain   string `json:"domain"` // EHLO name (default scanwarden)
	Timeout  time.Duration
	MaxConns int // concurrent sessions (default 16)
}

// MailListener is an SMTP server that accepts the devices' job-log e-mails.
type MailListener struct {
	cfg   MailListenerConfig
	rules *Rules
	sink  Sink
	index *DeviceIndex
	log   *slog.Logger
	now   func() time.Time

	srv    *smtp.Server
	ln     *trackingListener
	cancel context.CancelFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	mu                     sync.Mutex
	messages, bad, events  int
	unmatched, freshEvents int
}

// NewMailListener returns a listener; Open binds it.
func NewMailListener(cfg MailListenerConfig, rules *Rules, sink Sink, index *DeviceIndex, log *slog.Logger) (*MailListener, error) {
	if cfg.Addr == "" {
		return nil, errors.New("mail listener: addr is empty")
	}
	if rules == nil || sink == nil || index == nil {
		return nil, errors.New("mail listener: rules, sink and index are required")
	}
	if cfg.Domain == "" {
		cfg.Domain = "scanwarden"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 16
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &MailListener{cfg: cfg, rules: rules, sink: sink, index: index, log: log.With("component", "snmp.mail"),
		now: time.Now, sem: make(chan struct{}, cfg.MaxConns)}, nil
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
	m.ln = &trackingListener{Listener: ln, conns: map[*trackedConn]struct{}{}}
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
		m.ln.shut()
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
	m.ln.shut()
	m.wg.Wait()
	m.ln.wait()
	m.srv = nil
	return nil
}

// trackingListener owns the accepted connections: shut closes the socket
// and every connection, wait returns once each was closed.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	closed bool
	conns  map[*trackedConn]struct{}
	wg     sync.WaitGroup
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	tc := &trackedConn{Conn: c, l: l}
	l.conns[tc] = struct{}{}
	l.wg.Add(1)
	return tc, nil
}

// shut closes the socket and every open connection; it may be called more
// than once.
func (l *trackingListener) shut() {
	l.mu.Lock()
	l.closed = true
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	l.Listener.Close()
	for _, c := range conns {
		c.Conn.Close()
	}
}

func (l *trackingListener) wait() { l.wg.Wait() }

// trackedConn leaves its listener's set when closed.
type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		c.l.wg.Done()
	})
	return err
}

// MailStats are the listener's counters.
type MailStats struct {
	Messages  int `json:"messages"`
	Malformed int `json:"malformed"` // refused with 554: not a mail we understand
	Unmatched int `json:"unmatched"` // matched to no known device
	Events    int `json:"events"`
	NewEvents int `json:"new_events"`
}

// Stats returns the counters.
func (m *MailListener) Stats() MailStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MailStats{m.messages, m.bad, m.unmatched, m.events, m.freshEvents}
}

// Accept handles one message as received from peer with envelope sender
// from (the SMTP session calls it; tests may too).
func (m *MailListener) Accept(ctx context.Context, from string, peer netip.Addr, r io.Reader) error {
	m.mu.Lock()
	m.messages++
	m.mu.Unlock()
	pm, err := ParseMail(r)
	if err != nil {
		m.mu.Lock()
		m.bad++
		m.mu.Unlock()
		return fmt.Errorf("from %s (%s): %w", cleanString(from), peer, err)
	}
	sender := pm.From
	if sender == "" {
		sender = strings.ToLower(from)
	}
	device, how := m.index.Lookup(sender, peer, pm.Serial)
	if device == "" {
		m.mu.Lock()
		m.unmatched++
		m.mu.Unlock()
		device = "mail:" + cleanString(sender)
		how = "none"
	}
	for _, ev := range MailEvents(pm, device, m.rules, m.now()) {
		ev.Detail["matched_by"] = how
		fresh, err := m.sink.RecordEvent(ctx, ev)
		if err != nil {
			return fmt.Errorf("record mail event: %w", err)
		}
		m.mu.Lock()
		m.events++
		if fresh {
			m.freshEvents++
		}
		m.mu.Unlock()
	}
	return nil
}

type mailBackend struct {
	m   *MailListener
	ctx context.Context
}

func (b *mailBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	select {
	case b.m.sem <- struct{}{}:
	default:
		return nil, &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "too many connections"}
	}
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
func (s *mailSession) Logout() error { <-s.m.sem; return nil }
func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *mailSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *mailSession) Data(r io.Reader) error {
	err := s.m.Accept(s.ctx, s.from, s.peer, r)
	// Drain what the parser did not read: go-smtp requires it.
	io.Copy(io.Discard, r)
	if err != nil {
		s.m.log.Warn("mail not understood", "peer", s.peer.String(), "err", err)
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "message not understood"}
	}
	return nil
}

// slogPrinter adapts slog to go-smtp's Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) { p.l.Warn(fmt.Sprintf(format, v...)) }
func (p slogPrinter) Println(v ...any)               { p.l.Warn(fmt.Sprint(v...)) }
