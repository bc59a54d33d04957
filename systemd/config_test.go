package systemd

import (
	"testing"

	"github.com/scanwarden/scanwarden/config"
)

// TestShippedConfig: the conffile the package installs is one the daemon
// takes (as `serve --check-config` would), and says what an installed box
// needs — the daemon does not run without it.
func TestShippedConfig(t *testing.T) {
	cfg, err := config.Load("scanwarden.toml")
	if err != nil {
		t.Fatalf("the shipped %s: %v", ConfigFile, err)
	}
	if cfg.DataDir != StateDir {
		t.Errorf("data_dir = %q, want %s (the unit's StateDirectory)", cfg.DataDir, StateDir)
	}
	if cfg.Listen != "0.0.0.0:8080" {
		t.Errorf("listen = %q, want every address on 8080 (the admin's PC opens it)", cfg.Listen)
	}
	if !cfg.Receiver.ExternalSMBD {
		t.Errorf("[receiver] external_smbd is false: the daemon would start smbd in its own cgroup")
	}
	if cfg.Receiver.SmbdDir != SmbdDir {
		t.Errorf("[receiver] smbd_dir = %q, want %s (scanwarden-smbd.service's StateDirectory)", cfg.Receiver.SmbdDir, SmbdDir)
	}
	if cfg.Receiver.Enabled {
		t.Errorf("[receiver] enabled by default: it needs a listen address and a password first")
	}
}
