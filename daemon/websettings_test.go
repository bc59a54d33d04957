package daemon

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/web"
)

// Settings from the page are stored (secrets sealed), take effect at once
// and at the next start, and the file wins where it sets a key.
func TestSettings(t *testing.T) {
	hook := newHookPeer(t)
	cfg := testConfig(t, "[checks]\ninterval = \"20m\"\n")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b := settingsBackend{m}
	if err := b.Set(ctx, "checks", map[string]string{"interval": "5m", "max_failures": "0"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "notify", map[string]string{"webhook_url": hook.srv.URL + "/h", "webhook_secret": "page-s3cret"}); err != nil {
		t.Fatal(err)
	}
	c := b.current()
	if c.Checks.Interval.D() != 20*time.Minute || c.Checks.MaxFailures != 0 || c.Notify.WebhookURL == "" || c.Notify.WebhookSecret.Reveal() != "page-s3cret" {
		t.Fatalf("running config %+v %+v", c.Checks, c.Notify)
	}
	secs, _ := b.Settings(ctx)
	for _, s := range secs {
		for _, f := range s.Fields {
			if s.Name == "checks" && f.Key == "interval" && (!f.FromFile || f.Value != "20m0s") {
				t.Errorf("interval field %+v", f)
			}
			if f.Secret && f.Value != "" {
				t.Errorf("secret %s.%s shown", s.Name, f.Key)
			}
			if s.Name == "notify" && f.Key == "webhook_secret" && !f.Set {
				t.Errorf("webhook secret not marked set")
			}
		}
	}
	stored, _ := m.st.Settings().StoredSettings(ctx)
	for _, s := range stored {
		if strings.Contains(s.Value, "page-s3cret") {
			t.Fatal("a secret stored in clear")
		}
	}
	msg, err := b.SendTest(ctx, "webhook")
	if err != nil || !strings.Contains(msg, "delivered") || len(hook.events()) != 1 {
		t.Fatalf("send test: %q %v %v", msg, err, hook.events())
	}
	hook.mu.Lock()
	if hook.hdr[0] != "page-s3cret" {
		t.Fatalf("secret header %q", hook.hdr[0])
	}
	hook.mu.Unlock()
	var fe *web.FieldError
	if err := b.Set(ctx, "checks", map[string]string{"max_concurrent": "0"}); !errors.As(err, &fe) || fe.Field != "max_concurrent" {
		t.Fatalf("bad value: %v", err)
	}
	if err := b.Set(ctx, "checks", map[string]string{"nope": "1"}); !errors.As(err, &fe) {
		t.Fatalf("unknown key: %v", err)
	}
	m.Close()

	// The next start takes the stored settings.
	m2 := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m2.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	c = settingsBackend{m2}.current()
	if c.Notify.WebhookURL != hook.srv.URL+"/h" || c.Notify.WebhookSecret.Reveal() != "page-s3cret" || c.Checks.MaxFailures != 0 || len(m2.Faults()) != 0 {
		t.Fatalf("after restart: %+v faults %+v", c.Notify, m2.Faults())
	}
}

// The page takes the event log's reading account: stored with its
// password sealed, in effect at once (the checker's readers), kept at the
// next start; a user without a password is refused naming the field.
func TestSettingsEventlog(t *testing.T) {
	cfg := testConfig(t, "")
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	ctx := context.Background()
	if err := m.Open(ctx); err != nil {
		t.Fatal(err)
	}
	b := settingsBackend{m}
	var fe *web.FieldError
	if err := b.Set(ctx, "eventlog", map[string]string{"user": `KYOLAB\evreader`}); !errors.As(err, &fe) {
		t.Fatalf("a reading account without its password: %v", err)
	}
	if err := b.Set(ctx, "eventlog", map[string]string{"user": `KYOLAB\evreader`, "password": "rd-s3cret", "before": "5m"}); err != nil {
		t.Fatal(err)
	}
	c := b.current()
	r := eventlogReaders(c.Eventlog)
	if a, ok := r.For("fs1"); !ok || a.User != "evreader" || a.Domain != "KYOLAB" || a.Password.Reveal() != "rd-s3cret" || r.Before != 5*time.Minute {
		t.Fatalf("readers %+v %+v", r, a)
	}
	stored, _ := m.st.Settings().StoredSettings(ctx)
	for _, s := range stored {
		if strings.Contains(s.Value, "rd-s3cret") {
			t.Fatal("the reading account's password stored in clear")
		}
	}
	secs, _ := b.Settings(ctx)
	seen := false
	for _, s := range secs {
		for _, f := range s.Fields {
			if s.Name == "eventlog" && f.Key == "password" {
				seen = f.Set && f.Value == ""
			}
		}
	}
	if !seen {
		t.Error("the password field is not shown as set (and only so)")
	}
	m.Close()
	m2 := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m2.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if c := (settingsBackend{m2}).current(); c.Eventlog.User != `KYOLAB\evreader` || c.Eventlog.Password.Reveal() != "rd-s3cret" {
		t.Fatalf("after a restart: %q", c.Eventlog.User)
	}
}
