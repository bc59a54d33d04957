package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/scanwarden/scanwarden"
)

// DefaultSecretHeader carries the webhook secret when no other is named.
const DefaultSecretHeader = "X-Scanwarden-Secret"

// WebhookConfig is a webhook channel. Zero values are filled by
// DefaultWebhook's values only where the daemon's config says so; here 0
// attempts is an error.
type WebhookConfig struct {
	URL          string
	Secret       scanwarden.Secret // sent in SecretHeader when set
	SecretHeader string
	Attempts     int           // at least 1
	Backoff      time.Duration // wait before the 2nd attempt, doubled each time, capped at MaxBackoff
	MaxBackoff   time.Duration
	Timeout      time.Duration // per attempt
	// Client sends the POSTs (nil: a client with Timeout). The webhook
	// uses a copy that follows no redirect, whatever Client says.
	Client *http.Client
}

// Validate names the first field that cannot be used.
func (c WebhookConfig) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil:
		return fmt.Errorf("webhook_url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("webhook_url %q: want http:// or https://", c.URL)
	case u.Host == "":
		return fmt.Errorf("webhook_url %q: no host", c.URL)
	case c.Attempts < 1:
		return fmt.Errorf("webhook attempts %d: at least 1", c.Attempts)
	case c.Backoff < 0 || c.MaxBackoff < 0 || c.Timeout <= 0:
		return errors.New("webhook back-off and timeout: must be positive")
	}
	return nil
}

// Webhook posts messages as JSON.
type Webhook struct {
	cfg   WebhookConfig
	sleep func(context.Context, time.Duration) error
}

// NewWebhook checks cfg and returns the channel.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if cfg.SecretHeader == "" {
		cfg.SecretHeader = DefaultSecretHeader
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &http.Client{Timeout: cfg.Timeout}
	if cfg.Client != nil {
		cp := *cfg.Client
		c = &cp
	}
	// The body and the secret header go to the configured URL and nowhere
	// else: a redirect is an answer (RedirectError), never followed.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cfg.Client = c
	return &Webhook{cfg: cfg, sleep: sleepCtx}, nil
}

// Channel implements Sender.
func (w *Webhook) Channel() string { return "webhook" }

// StatusError is a refusal by the receiving end.
type StatusError struct {
	Code int
	Body string // the first bytes of the answer
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("webhook answered %d", e.Code)
	}
	return fmt.Sprintf("webhook answered %d: %q", e.Code, e.Body)
}

// RedirectError is a 3xx answer. Redirects are not followed (the secret
// header would go to wherever the answer points): the delivery failed, and
// the error names where the receiving end wanted it to go.
type RedirectError struct {
	Code     int
	Location string // resolved against the webhook URL, query and user info left out
}

func (e *RedirectError) Error() string {
	if e.Location == "" {
		return fmt.Sprintf("webhook answered %d, a redirect without a Location (redirects are not followed)", e.Code)
	}
	return fmt.Sprintf("webhook answered %d, a redirect to %s (not followed: set notify.webhook_url to the address that takes the POST)",
		e.Code, e.Location)
}

// retryable: network errors, 5xx, 408 and 429 are tried again; other
// refusals and redirects will not change by themselves.
func retryable(err error) bool {
	var re *RedirectError
	if errors.As(err, &re) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == http.StatusTooManyRequests || se.Code == http.StatusRequestTimeout
	}
	return true
}

// Send implements Sender: up to Attempts POSTs, with back-off in between.
func (w *Webhook) Send(ctx context.Context, m Message) (int, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return 0, err
	}
	wait := w.cfg.Backoff
	var last error
	for a := 1; a <= w.cfg.Attempts; a++ {
		if last = w.post(ctx, body); last == nil {
			return a, nil
		}
		if !retryable(last) || a == w.cfg.Attempts {
			return a, last
		}
		if err := w.sleep(ctx, wait); err != nil {
			return a, fmt.Errorf("%w (then: %v)", last, err)
		}
		if wait *= 2; w.cfg.MaxBackoff > 0 && wait > w.cfg.MaxBackoff {
			wait = w.cfg.MaxBackoff
		}
	}
	return w.cfg.Attempts, last
}

func (w *Webhook) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "scanwarden")
	if !w.cfg.Secret.IsZero() {
		req.Header.Set(w.cfg.SecretHeader, w.cfg.Secret.Reveal())
	}
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		// The URL may hold a token in its query: say only where it went.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("post to %s: %w", redactURL(w.cfg.URL), ue.Err)
		}
		return err
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 3 {
		re := &RedirectError{Code: resp.StatusCode}
		if loc, err := resp.Location(); err == nil {
			re.Location = redactURL(loc.String())
		}
		return re
	}
	if resp.StatusCode/100 != 2 {
		return &StatusError{Code: resp.StatusCode, Body: string(bytes.TrimSpace(snippet))}
	}
	return nil
}

// redactURL keeps scheme, host and path: a query or user info may be a secret.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(webhook url)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
