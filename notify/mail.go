package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/scanwarden/scanwarden"
)

// TLS modes of the mail channel.
const (
	MailStartTLS = "starttls" // STARTTLS required (port 587)
	MailTLS      = "tls"      // TLS from the first byte (port 465)
	MailPlain    = "none"     // no TLS (a relay on the LAN or loopback)
)

// MailConfig is an e-mail channel.
type MailConfig struct {
	Host     string
	Port     int
	TLS      string // starttls, tls or none
	User     string // empty: no SMTP authentication
	Password scanwarden.Secret
	From     string
	To       []string
	Timeout  time.Duration
}

// Validate names the first setting that cannot be used.
func (c MailConfig) Validate() error {
	switch {
	case c.Host == "":
		return errors.New("smtp_host: empty")
	case c.Port < 1 || c.Port > 65535:
		return fmt.Errorf("smtp_port %d: 1..65535", c.Port)
	case c.TLS != MailStartTLS && c.TLS != MailTLS && c.TLS != MailPlain:
		return fmt.Errorf("smtp_tls %q: starttls, tls or none", c.TLS)
	case c.From == "":
		return errors.New("smtp_from: empty")
	case len(c.To) == 0:
		return errors.New("mail_to: no recipient")
	case c.User != "" && c.Password.IsZero():
		return errors.New("smtp_password_file: smtp_user is set but no password")
	case c.Timeout <= 0:
		return errors.New("smtp timeout: must be positive")
	}
	return nil
}

// Mail sends messages as plain-text e-mail through go-mail.
type Mail struct{ cfg MailConfig }

// NewMail checks cfg and returns the channel.
func NewMail(cfg MailConfig) (*Mail, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Mail{cfg: cfg}, nil
}

// Channel implements Sender.
func (m *Mail) Channel() string { return "mail" }

// Send implements Sender: one attempt (the relay queues and retries).
func (m *Mail) Send(ctx context.Context, msg Message) (int, error) {
	c := m.cfg
	opts := []mail.Option{mail.WithPort(c.Port), mail.WithTimeout(c.Timeout)}
	switch c.TLS {
	case MailTLS:
		opts = append(opts, mail.WithSSL())
	case MailStartTLS:
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	default:
		opts = append(opts, mail.WithTLSPolicy(mail.NoTLS))
	}
	if c.User != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthPlain), mail.WithUsername(c.User), mail.WithPassword(c.Password.Reveal()))
	}
	client, err := mail.NewClient(c.Host, opts...)
	if err != nil {
		return 0, fmt.Errorf("mail client: %w", err)
	}
	em := mail.NewMsg()
	if err := em.From(c.From); err != nil {
		return 0, fmt.Errorf("smtp_from %q: %w", c.From, err)
	}
	if err := em.To(c.To...); err != nil {
		return 0, fmt.Errorf("mail_to: %w", err)
	}
	em.Subject(Subject(msg))
	em.SetDate()
	em.SetMessageID()
	em.SetBodyString(mail.TypeTextPlain, Body(msg))
	if err := client.DialAndSendWithContext(ctx, em); err != nil {
		return 1, fmt.Errorf("send mail via %s:%d: %w", c.Host, c.Port, err)
	}
	return 1, nil
}

// Body is the plain-text mail body.
func Body(m Message) string {
	p := m.Incident
	var b strings.Builder
	if w := m.Warning; w != nil {
		if m.Event == EventWarningCleared {
			fmt.Fprintf(&b, "Cleared: %s (%s) no longer holds for any destination.\n\nIt was: %s\n", w.Kind, w.Subject, w.Summary)
			return b.String()
		}
		fmt.Fprintf(&b, "%s\n\nWhat to do: %s\n\n", w.Summary, w.Fix)
		fmt.Fprintf(&b, "Warning:      %s (%s)\n", w.Kind, w.Subject)
		if !w.Due.IsZero() {
			fmt.Fprintf(&b, "When:         %s\n", w.Due.Format(time.RFC1123))
		}
		fmt.Fprintf(&b, "Destinations: %s\n", strings.Join(w.Destinations, ", "))
		if len(w.Devices) > 0 {
			fmt.Fprintf(&b, "MFPs:         %s\n", strings.Join(w.Devices, ", "))
		}
		b.WriteString("\nThe destinations' checks still pass; this says what will fail, once. A mail comes again when it clears.\n")
		return b.String()
	}
	if m.Test {
		b.WriteString("This is a test notification from scanwarden. This channel works.\n")
		return b.String()
	}
	if g := m.Group; g != nil {
		fmt.Fprintf(&b, "%s\n\nDestinations: %s\n\n", g.Headline, strings.Join(g.Destinations, ", "))
	}
	fmt.Fprintf(&b, "Destination: %s\n", p.Destination)
	if p.Device != "" {
		fmt.Fprintf(&b, "Device:      %s\n", p.Device)
	}
	if p.Cause != "" {
		fmt.Fprintf(&b, "Cause:       %s\n", p.Cause)
	}
	if p.KyoceraCode != "" {
		fmt.Fprintf(&b, "Panel code:  %s\n", p.KyoceraCode)
	}
	fmt.Fprintf(&b, "Opened:      %s\n", p.OpenedAt.Format(time.RFC1123))
	if p.ClosedAt != nil {
		fmt.Fprintf(&b, "Closed:      %s\n", p.ClosedAt.Format(time.RFC1123))
	}
	if p.Jobs > 0 {
		fmt.Fprintf(&b, "Failed jobs: %d\n", p.Jobs)
	}
	if p.Flaps > 0 {
		fmt.Fprintf(&b, "Reopened:    %d times\n", p.Flaps)
	}
	fmt.Fprintf(&b, "\n%s\n", p.Summary)
	if m.Event != EventClosed && p.Fix != "" {
		fmt.Fprintf(&b, "\nWhat to do: %s\n", p.Fix)
	}
	fmt.Fprintf(&b, "\nIncident %d (%s)\n", p.ID, m.Event)
	return b.String()
}
