package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

func openMain(t *testing.T, cfg config.Config) *Main {
	t.Helper()
	m := &Main{Config: &cfg, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if err := m.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// rotate runs `secrets rotate` on the data dir as the CLI does (its own
// store handle, the daemon stopped).
func rotate(t *testing.T, cfg config.Config) error {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenDir(ctx, cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, filepath.Join(cfg.DataDir, seal.FileName)); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = st.RotateKey(ctx)
	return err
}

// Every secret survives `secrets rotate`: those saved from the settings
// page (AD, webhook, SMTP, SNMP community) and those the CLI stores in the
// registry (a destination's password, a device's community). Before, the
// page's were left under the old key and the restarted daemon dropped every
// stored setting.
func TestAttackRotateKeepsEverySecret(t *testing.T) {
	hook := newHookPeer(t)
	cfg := testConfig(t, "")
	ctx := context.Background()
	m := openMain(t, cfg)
	b := settingsBackend{m}
	for section, vals := range map[string]map[string]string{
		"ad":     {"url": "ldaps://127.0.0.1:1", "bind_user": "svc-scan", "password": "ad-page-pw"},
		"notify": {"webhook_url": hook.srv.URL + "/h", "webhook_secret": "hook-page-pw", "smtp_host": "127.0.0.1", "smtp_port": "2525", "smtp_password": "smtp-page-pw", "smtp_user": "relay", "smtp_from": "sw@example.test", "mail_to": "admin@example.test"},
		"snmp":   {"community": "snmp-page-pw"},
	} {
		if err := b.Set(ctx, section, vals); err != nil {
			t.Fatalf("set %s: %v", section, err)
		}
	}
	if err := m.st.Devices().PutDevice(ctx, registry.Device{Name: "mfp01", Address: "127.0.0.1:1161",
		SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("dev-cli-community")}}); err != nil {
		t.Fatal(err)
	}
	if err := m.st.Destinations().PutDestination(ctx, registry.Destination{Name: "reception", Device: "mfp01", Host: "127.0.0.1", Port: 445, Share: "scans",
		User: "alice", Password: scanwarden.NewSecret("dest-cli-pw"), Source: registry.SourceAdded}); err != nil {
		t.Fatal(err)
	}
	m.Close()

	if err := rotate(t, cfg); err != nil {
		t.Fatalf("rotate: %v", err)
	}

	m2 := openMain(t, cfg)
	defer m2.Close()
	c := settingsBackend{m2}.current()
	for name, got := range map[string]scanwarden.Secret{"ad.password": c.AD.Password, "notify.webhook_secret": c.Notify.WebhookSecret,
		"notify.smtp_password": c.Notify.SMTPPassword, "snmp.community": c.SNMP.Community} {
		want := map[string]string{"ad.password": "ad-page-pw", "notify.webhook_secret": "hook-page-pw", "notify.smtp_password": "smtp-page-pw", "snmp.community": "snmp-page-pw"}[name]
		if got.Reveal() != want {
			t.Errorf("after rotate and restart, %s = %q, want %q", name, got.Reveal(), want)
		}
	}
	if f := m2.Faults(); len(f) != 0 {
		t.Errorf("faults after rotate and restart: %+v", f)
	}
	dev, err := m2.st.Devices().Device(ctx, "mfp01")
	if err != nil || dev.SNMP.Community.Reveal() != "dev-cli-community" {
		t.Errorf("device community after rotate: %q %v", dev.SNMP.Community.Reveal(), err)
	}
	dest, err := m2.st.Destinations().Destination(ctx, "reception")
	if err != nil || dest.Password.Reveal() != "dest-cli-pw" {
		t.Errorf("destination password after rotate: %v", err)
	}
	// And used: the webhook test carries the rotated secret.
	if _, err := (settingsBackend{m2}).SendTest(ctx, "webhook"); err != nil {
		t.Fatal(err)
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if len(hook.hdr) != 1 || hook.hdr[0] != "hook-page-pw" {
		t.Errorf("webhook secret header after rotate: %q", hook.hdr)
	}
}

// A value that does not open with the key is named, and the rotation
// changes nothing; at start the overlay skips just that value, with a
// standing fault naming it, and applies the others.
func TestAttackUnreadableSettingNamedAndSkipped(t *testing.T) {
	cfg := testConfig(t, "")
	ctx := context.Background()
	m := openMain(t, cfg)
	b := settingsBackend{m}
	if err := b.Set(ctx, "checks", map[string]string{"interval": "7m"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "notify", map[string]string{"webhook_url": "http://127.0.0.1:1/h", "webhook_secret": "hook-pw"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx, "ad", map[string]string{"url": "ldaps://127.0.0.1:1", "bind_user": "svc", "password": "ad-pw"}); err != nil {
		t.Fatal(err)
	}
	// The AD password sealed by another key (a restore from another box).
	other, _ := seal.New()
	if err := m.st.Settings().SetSettings(ctx, []config.Saved{{Section: "ad", Key: "password", Secret: true,
		Value: string(other.Seal([]byte("ad-pw"), store.SettingLabel("ad", "password")))}}); err != nil {
		t.Fatal(err)
	}
	m.Close()

	keyBefore, _ := seal.Load(filepath.Join(cfg.DataDir, seal.FileName))
	err := rotate(t, cfg)
	var ue *store.UnreadableError
	if !errors.As(err, &ue) || len(ue.Names) != 1 || ue.Names[0] != "setting ad.password" {
		t.Fatalf("rotate with an unreadable value: %v, want it named (setting ad.password)", err)
	}
	keyAfter, _ := seal.Load(filepath.Join(cfg.DataDir, seal.FileName))
	if keyAfter.ID() != keyBefore.ID() {
		t.Fatal("the key was replaced although a value did not open")
	}

	m2 := openMain(t, cfg)
	defer m2.Close()
	c := settingsBackend{m2}.current()
	if c.Checks.Interval.D() != 7*time.Minute || c.Notify.WebhookSecret.Reveal() != "hook-pw" || c.Notify.WebhookURL == "" {
		t.Errorf("the readable settings were not applied: interval %v, webhook secret set %v",
			c.Checks.Interval.D(), !c.Notify.WebhookSecret.IsZero())
	}
	// Without its password the stored DC is not used either.
	if !c.AD.Password.IsZero() || c.AD.URL != "" {
		t.Errorf("AD with an unreadable password: url %q, password set %v", c.AD.URL, !c.AD.Password.IsZero())
	}
	found := false
	for _, f := range m2.Faults() {
		if f.Part == "settings.unreadable" && strings.Contains(f.Message, "ad.password") {
			found = true
		}
	}
	if !found {
		t.Errorf("no standing fault names ad.password: %+v", m2.Faults())
	}
}

// ldapsTrap is an LDAPS server on loopback (an attacker's, for the test):
// it completes TLS with a certificate the configured CA signed and records
// every byte the client sends.
type ldapsTrap struct {
	ln  net.Listener
	mu  sync.Mutex
	got bytes.Buffer
	// accepted connections, and those whose reader ended (EOF, or the 3 s
	// deadline): once equal, everything sent so far has been read.
	accepted, ended int
}

func newLDAPSTrap(t *testing.T, cert tls.Certificate) *ldapsTrap {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	tr := &ldapsTrap{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tr.mu.Lock()
			tr.accepted++
			tr.mu.Unlock()
			go func() {
				defer func() {
					c.Close()
					tr.mu.Lock()
					tr.ended++
					tr.mu.Unlock()
				}()
				c.SetDeadline(time.Now().Add(3 * time.Second))
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					tr.mu.Lock()
					tr.got.Write(buf[:n])
					tr.mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return tr
}

func (tr *ldapsTrap) saw(s string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return bytes.Contains(tr.got.Bytes(), []byte(s))
}

// idle says whether every accepted connection has been read to its end.
// A client that sent anything was accepted first: the TLS handshake runs
// in the reader, after the count.
func (tr *ldapsTrap) idle() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.accepted == tr.ended
}

func (tr *ldapsTrap) bytes() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.got.Len()
}

// Changing only ad.url on the settings page does not send the stored bind
// password to the new server: the password belongs to the old URL and is
// dropped (it was sent: the next check bound to the new server with it).
// The same holds for the webhook URL, the SMTP relay and the SNMP networks.
func TestAttackEndpointChangeDropsSecret(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := selfSigned(t, dir)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	trap := newLDAPSTrap(t, cert)
	cfg := testConfig(t, "")
	ctx := context.Background()
	m := openMain(t, cfg)
	defer m.Close()
	b := settingsBackend{m}
	const bindPW = "bind-pw-9f3e1c"
	if err := b.Set(ctx, "ad", map[string]string{"url": "ldaps://127.0.0.1:1", "bind_user": "svc-scan@kyolab.test", "password": bindPW,
		"ca": certFile, "timeout": "2s"}); err != nil {
		t.Fatal(err)
	}
	// The attacker changes only the URL (the form posts every field, the
	// secret empty: "keep the stored one"). It is refused until the
	// password is entered again.
	var fe *web.FieldError
	err = b.Set(ctx, "ad", map[string]string{"url": "ldaps://" + trap.ln.Addr().String(), "bind_user": "svc-scan@kyolab.test",
		"password": "", "ca": certFile, "timeout": "2s"})
	if err != nil && (!errors.As(err, &fe) || fe.Field != "password" || !strings.Contains(fe.Reason, "again")) {
		t.Fatalf("changing only ad.url: %v, want it done without the password or refused asking for it again", err)
	}
	// Press Check: the directory is asked about an account.
	dir2 := m.live.get().checks.dir
	if dir2 != nil {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		dir2.Account(cctx, `KYOLAB\alice`, "MFP01")
		cancel()
	}
	waitUntil(t, 10*time.Second, "the new server to read what it was sent", trap.idle)
	t.Logf("the new server received %d bytes", trap.bytes())
	if trap.saw(bindPW) {
		t.Fatal("the stored bind password was sent to the new AD URL")
	}
	if c := b.current(); !c.AD.Password.IsZero() && strings.Contains(c.AD.URL, trap.ln.Addr().String()) {
		t.Error("the bind password is configured with the new URL")
	}

	// The other ties: each endpoint change drops its secret; entering the
	// secret with the change keeps the new one.
	for _, c := range []struct {
		section, secret string
		first, moved    map[string]string
		get             func(config.Config) scanwarden.Secret
	}{
		{"notify", "webhook_secret", map[string]string{"webhook_url": "http://127.0.0.1:1/a", "webhook_secret": "w-pw"},
			map[string]string{"webhook_url": "http://127.0.0.1:2/b"}, func(c config.Config) scanwarden.Secret { return c.Notify.WebhookSecret }},
		{"notify", "smtp_password", map[string]string{"smtp_host": "127.0.0.1", "smtp_port": "2525", "smtp_user": "u", "smtp_password": "s-pw",
			"smtp_from": "sw@example.test", "mail_to": "a@example.test"}, map[string]string{"smtp_port": "2526"}, func(c config.Config) scanwarden.Secret { return c.Notify.SMTPPassword }},
		{"snmp", "community", map[string]string{"cidr": "127.0.0.0/30", "community": "c-pw"},
			map[string]string{"cidr": "127.0.1.0/30"}, func(c config.Config) scanwarden.Secret { return c.SNMP.Community }},
	} {
		if err := b.Set(ctx, c.section, c.first); err != nil {
			t.Fatalf("%s: %v", c.section, err)
		}
		if c.get(b.current()).IsZero() {
			t.Fatalf("%s.%s not set", c.section, c.secret)
		}
		moved := map[string]string{}
		for k, v := range c.first {
			if k != c.secret {
				moved[k] = v
			}
		}
		for k, v := range c.moved {
			moved[k] = v
		}
		if err := b.Set(ctx, c.section, moved); err != nil {
			if !errors.As(err, &fe) || fe.Field != c.secret {
				t.Fatalf("%s move: %v", c.section, err)
			}
			t.Logf("%s move refused: %v", c.section, err)
		} else if s := c.get(b.current()); s.Reveal() == c.first[c.secret] {
			t.Errorf("%s.%s kept after its endpoint moved", c.section, c.secret)
		}
		with := map[string]string{c.secret: "new-pw"}
		for k, v := range c.first {
			if k != c.secret {
				with[k] = v
			}
		}
		if err := b.Set(ctx, c.section, with); err != nil {
			t.Fatalf("%s move with the secret: %v", c.section, err)
		}
		if s := c.get(b.current()); s.Reveal() != "new-pw" {
			t.Errorf("%s.%s entered with the move: %q", c.section, c.secret, s.Reveal())
		}
	}
}
