package daemon

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
)

// A secret stored from the settings page stays with the endpoint it was
// entered for when the endpoint moves in the config file: the file's
// webhook_url edited to another server and `systemctl reload` (or a
// restart) must not send the stored webhook secret there — it was sent: the
// overlay laid the stored secret over whatever URL the file named. The same
// for the mail relay (host, port) and the SNMP networks. ([ad] cannot be
// moved that way: the file's ad.url needs the file's own password_file.)
// Moving the file's endpoint back brings the secret back; entering it again
// binds it to the new endpoint.
func TestAttackFileEndpointChangeDropsWebSecret(t *testing.T) {
	oldHook, newHook := newHookPeer(t), newHookPeer(t)
	file := func(hook *hookPeer, smtpPort, cidr string) string {
		return "[notify]\nwebhook_url = \"" + hook.srv.URL + "/h\"\nsmtp_host = \"127.0.0.1\"\nsmtp_port = " + smtpPort + "\n" +
			"smtp_from = \"sw@example.test\"\nmail_to = [\"a@example.test\"]\n[snmp]\ncidr = [\"" + cidr + "\"]\n"
	}
	before, moved := file(oldHook, "2525", "127.0.0.0/30"), file(newHook, "2526", "127.0.1.0/30")
	cfg := testConfig(t, before)
	ctx := context.Background()
	m := openMain(t, cfg)
	defer m.Close()
	b := settingsBackend{m}
	for section, vals := range map[string]map[string]string{
		"notify": {"webhook_secret": "hook-pw-51c0", "smtp_user": "relay", "smtp_password": "smtp-pw"},
		"snmp":   {"community": "c-pw"},
	} {
		if err := b.Set(ctx, section, vals); err != nil {
			t.Fatalf("set %s: %v", section, err)
		}
	}
	secrets := func(c config.Config) map[string]scanwarden.Secret {
		return map[string]scanwarden.Secret{"notify.webhook_secret": c.Notify.WebhookSecret,
			"notify.smtp_password": c.Notify.SMTPPassword, "snmp.community": c.SNMP.Community}
	}
	entered := map[string]string{"notify.webhook_secret": "hook-pw-51c0", "notify.smtp_password": "smtp-pw", "snmp.community": "c-pw"}
	for name, s := range secrets(b.current()) {
		if s.Reveal() != entered[name] {
			t.Fatalf("%s not set from the page", name)
		}
	}

	// The file's endpoints move (the admin's edit, or anyone's who can
	// write it), then systemctl reload, then a test notification.
	writeConfigFile(t, cfg, moved)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	b.SendTest(ctx, "webhook")
	newHook.mu.Lock()
	hdr := newHook.hdr
	newHook.mu.Unlock()
	if len(hdr) == 0 {
		t.Fatal("the test notification did not reach the moved webhook URL")
	}
	if hdr[0] == "hook-pw-51c0" {
		t.Error("the stored webhook secret was sent to the URL the file moved to")
	}
	for name, s := range secrets(b.current()) {
		if s.Reveal() == entered[name] {
			t.Errorf("%s stored for the old endpoint is used with the file's new one", name)
		}
	}
	if c := b.current(); c.Notify.SMTPUser != "" {
		t.Errorf("the relay user entered with the old relay's password is used with the new relay: %q", c.Notify.SMTPUser)
	}
	found := false
	for _, f := range m.Faults() {
		if f.Part == "settings.unreadable" && strings.Contains(f.Message, "notify.webhook_secret") && strings.Contains(f.Message, "again") {
			found = true
		}
	}
	if !found {
		t.Errorf("no standing fault says notify.webhook_secret must be entered again: %+v", m.Faults())
	}

	// Back to the endpoints they were entered for: they apply again.
	writeConfigFile(t, cfg, before)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	for name, s := range secrets(b.current()) {
		if s.Reveal() != entered[name] {
			t.Errorf("%s not used with the endpoint it was entered for", name)
		}
	}
	// Moved again, and the secret entered for the new URL: it is used.
	writeConfigFile(t, cfg, moved)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "notify", map[string]string{"webhook_secret": "new-pw"}); err != nil {
		t.Fatal(err)
	}
	if c := b.current(); c.Notify.WebhookSecret.Reveal() != "new-pw" || !strings.HasPrefix(c.Notify.WebhookURL, newHook.srv.URL) {
		t.Errorf("the secret entered for the moved URL: url %q, secret %q", c.Notify.WebhookURL, c.Notify.WebhookSecret.Reveal())
	}
	// A secret stored before endpoints were pinned is pinned where it is
	// used at the next start or reload.
	if err := m.st.Settings().DeleteSetting(ctx, "snmp", "community@endpoint"); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	stored, err := m.st.Settings().StoredSettings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(stored, func(s config.Saved) bool {
		return s.Section == "snmp" && s.Key == "community@endpoint" && s.Value == "127.0.1.0/30"
	}) {
		t.Errorf("an unpinned stored community was not pinned to the networks in effect: %+v", stored)
	}
}

// writeConfigFile replaces everything from the first section of cfg's file
// with sections.
func writeConfigFile(t *testing.T, cfg config.Config, sections string) {
	t.Helper()
	b, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(b), "[")
	if err := os.WriteFile(cfg.File, []byte(head+sections), 0o600); err != nil {
		t.Fatal(err)
	}
}
