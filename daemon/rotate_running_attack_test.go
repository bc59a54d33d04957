package daemon

import (
	"context"
	"strings"
	"testing"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
)

// `secrets rotate` run while serve runs (its help does not say to stop
// it): serve still holds the old key, and a secret saved on the settings
// page or a destination added through it afterwards was sealed with the old
// key under a database that records the new one — accepted, then unreadable
// after the restart (lost) and a block on the next rotation. A write sealed
// with a key that is no longer the database's is refused, saying to
// restart; what is accepted opens after the restart.
func TestAttackRotateWhileServeRuns(t *testing.T) {
	cfg := testConfig(t, "")
	ctx := context.Background()
	m := openMain(t, cfg)
	b := settingsBackend{m}
	if err := b.Set(ctx, "notify", map[string]string{"webhook_url": "http://127.0.0.1:1/h", "webhook_secret": "before"}); err != nil {
		t.Fatal(err)
	}
	if err := rotate(t, cfg); err != nil {
		t.Fatalf("rotate: %v", err)
	}
	setErr := b.Set(ctx, "snmp", map[string]string{"community": "after-rotate"})
	destErr := m.st.Destinations().PutDestination(ctx, registry.Destination{Name: "d1", Host: "127.0.0.1", Port: 445, Share: "scans",
		User: "alice", Password: scanwarden.NewSecret("dest-after-rotate"), Source: registry.SourceAdded})
	devErr := m.st.Devices().PutDevice(ctx, registry.Device{Name: "mfp01", Address: "127.0.0.1:1161",
		SNMP: registry.SNMP{Version: "2c", Community: scanwarden.NewSecret("dev-after-rotate")}})
	for what, err := range map[string]error{"settings page": setErr, "destination": destErr, "device": devErr} {
		if err != nil && !strings.Contains(err.Error(), "restart") {
			t.Errorf("%s refused without saying to restart: %v", what, err)
		}
	}
	m.Close()

	m2 := openMain(t, cfg)
	defer m2.Close()
	c := settingsBackend{m2}.current()
	if c.Notify.WebhookSecret.Reveal() != "before" {
		t.Errorf("the secret saved before the rotation: %q", c.Notify.WebhookSecret.Reveal())
	}
	if setErr == nil && c.SNMP.Community.Reveal() != "after-rotate" {
		t.Errorf("a community saved on the page after the rotation was accepted and is lost after the restart (%q); faults %+v",
			c.SNMP.Community.Reveal(), m2.Faults())
	}
	if destErr == nil {
		if d, err := m2.st.Destinations().Destination(ctx, "d1"); err != nil || d.Password.Reveal() != "dest-after-rotate" {
			t.Errorf("a destination added after the rotation was accepted and its password is lost after the restart: %v", err)
		}
	}
	if devErr == nil {
		if d, err := m2.st.Devices().Device(ctx, "mfp01"); err != nil || d.SNMP.Community.Reveal() != "dev-after-rotate" {
			t.Errorf("a device added after the rotation was accepted and its community is lost after the restart: %v", err)
		}
	}
	if err := rotate(t, cfg); err != nil {
		t.Errorf("the next rotation: %v", err)
	}
}
