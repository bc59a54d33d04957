package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The overlay rule alone: stored settings over the file's config, the file
// winning where it sets a key, what cannot be used skipped and named.
func TestOverlay(t *testing.T) {
	// open unseals "ok:VALUE"; anything else does not open (a fake of the
	// sealing key: a secret sealed under another key).
	open := func(sealed []byte, section, key string) ([]byte, error) {
		if v, ok := strings.CutPrefix(string(sealed), "ok:"); ok {
			return []byte(v), nil
		}
		return nil, errors.New("message authentication failed")
	}
	base := Defaults()
	base.Notify.WebhookURL = "https://hooks.example.test/file"
	for _, tc := range []struct {
		name     string
		fileKeys []string
		stored   []Saved
		check    func(Config) bool
		skipped  []string // substrings, in order
		invalid  bool
	}{
		{name: "a value the file leaves out applies",
			stored: []Saved{{Section: "checks", Key: "interval", Value: "5m"}, {Section: "snmp", Key: "cidr", Value: "10.1.0.0/24, 10.2.0.0/24"}},
			check: func(c Config) bool {
				return c.Checks.Interval.D() == 5*time.Minute && slices.Equal(c.SNMP.CIDR, []string{"10.1.0.0/24", "10.2.0.0/24"})
			}},
		{name: "the file wins", fileKeys: []string{"checks.interval", "ad.password_file"},
			stored: []Saved{{Section: "checks", Key: "interval", Value: "5m"}, {Section: "ad", Key: "password", Value: "ok:page", Secret: true}},
			check:  func(c Config) bool { return c.Checks.Interval == base.Checks.Interval && c.AD.Password.IsZero() }},
		{name: "a secret that opens applies",
			stored: []Saved{{Section: "notify", Key: "webhook_secret", Value: "ok:s3cret", Secret: true}},
			check:  func(c Config) bool { return c.Notify.WebhookSecret.Reveal() == "s3cret" }},
		{name: "a secret that does not open is skipped, its endpoint stays the file's",
			stored: []Saved{{Section: "notify", Key: "webhook_url", Value: "https://evil.example.test/"},
				{Section: "notify", Key: "webhook_secret", Value: "sealed-elsewhere", Secret: true},
				{Section: "checks", Key: "jitter", Value: "10s"}},
			check: func(c Config) bool {
				return c.Notify.WebhookURL == base.Notify.WebhookURL && c.Notify.WebhookSecret.IsZero() && c.Checks.Jitter.D() == 10*time.Second
			},
			skipped: []string{"notify.webhook_secret: message authentication failed", "notify.webhook_url: not used without notify.webhook_secret"}},
		{name: "a value that no longer parses is skipped, the others apply",
			stored: []Saved{{Section: "checks", Key: "interval", Value: "soon"}, {Section: "checks", Key: "max_concurrent", Value: "2"}},
			check: func(c Config) bool {
				return c.Checks.Interval == base.Checks.Interval && c.Checks.MaxConcurrent == 2
			},
			skipped: []string{"checks.interval: \"soon\" is not a duration"}},
		{name: "an unknown setting is ignored",
			stored: []Saved{{Section: "checks", Key: "retired", Value: "1"}},
			check:  func(c Config) bool { return reflect.DeepEqual(c.Checks, base.Checks) }},
		{name: "a result that does not validate is refused, the file's kept",
			stored: []Saved{{Section: "checks", Key: "max_concurrent", Value: "0"}, {Section: "checks", Key: "interval", Value: "5m"}},
			check:  func(c Config) bool { return reflect.DeepEqual(c.Checks, base.Checks) }, invalid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.FileKeys = tc.fileKeys
			got, skipped, err := Overlay(cfg, tc.stored, open)
			var es Errors
			if tc.invalid != errors.As(err, &es) || !tc.invalid && err != nil {
				t.Fatalf("err %v", err)
			}
			if !tc.check(got) {
				t.Errorf("config %+v %+v", got.Checks, got.Notify)
			}
			if len(skipped) != len(tc.skipped) {
				t.Fatalf("skipped %q, want %q", skipped, tc.skipped)
			}
			for i, s := range tc.skipped {
				if !strings.Contains(skipped[i], s) {
					t.Errorf("skipped[%d] %q, want %q", i, skipped[i], s)
				}
			}
			if slices.Contains(base.SNMP.CIDR, "10.1.0.0/24") {
				t.Error("the overlay wrote into the file config's slice")
			}
		})
	}
}
