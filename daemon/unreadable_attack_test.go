package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/store"
)

// A stored secret that does not open is skipped with a standing fault and
// never costs the other stored settings. The relay password: its relay
// went back to the file's, but the relay user stored with it stayed, and
// "smtp_user without a password" failed the whole overlay — every setting
// saved on the page was dropped at start (the check interval here).
func TestAttackUnreadableRelayPasswordKeepsTheRest(t *testing.T) {
	cfg := testConfig(t, "")
	ctx := context.Background()
	m := openMain(t, cfg)
	b := settingsBackend{m}
	if err := b.Set(ctx, "checks", map[string]string{"interval": "7m"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "notify", map[string]string{"smtp_host": "127.0.0.1", "smtp_port": "2525", "smtp_user": "relay",
		"smtp_password": "relay-pw", "smtp_from": "sw@example.test", "mail_to": "a@example.test"}); err != nil {
		t.Fatal(err)
	}
	other, _ := seal.New()
	if err := m.st.Settings().SetSettings(ctx, []config.Saved{{Section: "notify", Key: "smtp_password", Secret: true,
		Value: string(other.Seal([]byte("relay-pw"), store.SettingLabel("notify", "smtp_password")))}}); err != nil {
		t.Fatal(err)
	}
	m.Close()

	m2 := openMain(t, cfg)
	defer m2.Close()
	c := settingsBackend{m2}.current()
	if c.Checks.Interval.D() != 7*time.Minute {
		t.Errorf("the stored check interval was dropped with the unreadable relay password: %v; faults %+v", c.Checks.Interval.D(), m2.Faults())
	}
	if c.Notify.SMTPHost != "" || c.Notify.SMTPUser != "" || !c.Notify.SMTPPassword.IsZero() {
		t.Errorf("the relay is used without its password: host %q user %q", c.Notify.SMTPHost, c.Notify.SMTPUser)
	}
	found := false
	for _, f := range m2.Faults() {
		if f.Part == "settings.unreadable" && strings.Contains(f.Message, "notify.smtp_password") {
			found = true
		}
	}
	if !found {
		t.Errorf("no standing fault names notify.smtp_password: %+v", m2.Faults())
	}
}
