package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/notify"
)

// Notify is [notify]; a channel is on when its address is set.
type Notify struct {
	WebhookURL          string   `toml:"webhook_url"`           // incident changes are POSTed here as JSON ("" = off)
	WebhookSecretFile   string   `toml:"webhook_secret_file"`   // file holding a secret sent in webhook_secret_header
	WebhookSecretHeader string   `toml:"webhook_secret_header"` // the header that carries the webhook secret
	WebhookAttempts     int      `toml:"webhook_attempts"`      // tries per notification before it is given up
	WebhookBackoff      Duration `toml:"webhook_backoff"`       // wait before the first retry, doubled after each failed attempt
	SMTPHost            string   `toml:"smtp_host"`             // mail relay for notifications ("" = no mail)
	SMTPPort            int      `toml:"smtp_port"`             // the relay's port
	SMTPTLS             string   `toml:"smtp_tls"`              // starttls, tls, none
	SMTPUser            string   `toml:"smtp_user"`             // login at the relay ("" = none)
	SMTPPasswordFile    string   `toml:"smtp_password_file"`    // file holding smtp_user's password
	SMTPFrom            string   `toml:"smtp_from"`             // the From address of notification mail
	MailTo              []string `toml:"mail_to"`               // recipients of notification mail

	WebhookSecret scanwarden.Secret `toml:"-"`
	SMTPPassword  scanwarden.Secret `toml:"-"`
}

// validate checks [notify].
func (n Notify) validate(bad badValue) {
	if n.WebhookURL != "" {
		u, err := url.Parse(n.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("notify.webhook_url", "(hidden)", "want http(s)://HOST/PATH")
		}
	}
	if n.WebhookAttempts < 1 || n.WebhookAttempts > 20 {
		bad("notify.webhook_attempts", n.WebhookAttempts, "1..20")
	}
	if n.WebhookBackoff.D() < 0 {
		bad("notify.webhook_backoff", n.WebhookBackoff.D(), "0 or more")
	}
	if n.WebhookSecretHeader == "" || strings.ContainsAny(n.WebhookSecretHeader, " :\r\n") {
		bad("notify.webhook_secret_header", strconv.Quote(n.WebhookSecretHeader), "an HTTP header name")
	}
	if n.SMTPPort < 1 || n.SMTPPort > 65535 {
		bad("notify.smtp_port", n.SMTPPort, "1..65535")
	}
	switch n.SMTPTLS {
	case "starttls", "tls", "none":
	default:
		bad("notify.smtp_tls", strconv.Quote(n.SMTPTLS), "starttls, tls or none")
	}
	if n.SMTPHost != "" {
		if n.SMTPFrom == "" {
			bad("notify.smtp_from", `""`, "needed with notify.smtp_host")
		}
		if len(n.MailTo) == 0 {
			bad("notify.mail_to", "[]", "needed with notify.smtp_host")
		}
	}
	for _, to := range n.MailTo {
		if !strings.Contains(to, "@") {
			bad("notify.mail_to", strconv.Quote(to), "not an e-mail address")
		}
	}
	if n.SMTPUser != "" && n.SMTPPasswordFile == "" && n.SMTPPassword.IsZero() {
		bad("notify.smtp_password_file", `""`, "needed with notify.smtp_user")
	}
}

// Senders builds the notification channels n turns on; a channel that
// cannot be built is in errs under its name (webhook, mail).
func (n Notify) Senders() (senders []notify.Sender, errs map[string]error) {
	errs = map[string]error{}
	if n.WebhookURL != "" {
		w, err := notify.NewWebhook(notify.WebhookConfig{URL: n.WebhookURL, Secret: n.WebhookSecret, SecretHeader: n.WebhookSecretHeader,
			Attempts: n.WebhookAttempts, Backoff: n.WebhookBackoff.D(), MaxBackoff: 5 * time.Minute, Timeout: 10 * time.Second})
		if err != nil {
			errs["webhook"] = err
		} else {
			senders = append(senders, w)
		}
	}
	if n.SMTPHost != "" {
		ml, err := notify.NewMail(notify.MailConfig{Host: n.SMTPHost, Port: n.SMTPPort, TLS: n.SMTPTLS, User: n.SMTPUser,
			Password: n.SMTPPassword, From: n.SMTPFrom, To: n.MailTo, Timeout: 30 * time.Second})
		if err != nil {
			errs["mail"] = err
		} else {
			senders = append(senders, ml)
		}
	}
	return senders, errs
}
