package daemon

import (
	"context"
	"strings"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/store"
)

// Settings changed on the web page are stored (table stored_settings,
// secrets sealed) and laid over the config file's values at every start and
// reload (config.Overlay) — except where the file sets the key.

// storedSettings are the settings saved from the web page, laid over the
// config serve runs with (Open, Reload).
type storedSettings struct{ env }

// apply is cfg with the stored settings laid over it; settings that cannot
// be used are the "settings" fault.
func (s storedSettings) apply(ctx context.Context, cfg config.Config) config.Config {
	c, err := s.overlay(ctx, cfg)
	if err != nil {
		s.faults.set("settings", "settings stored from the web page not used: "+err.Error())
		s.log.Error("stored settings not used", "err", err)
		return cfg
	}
	return c
}

// overlay lays the settings stored from the web page over cfg
// (config.Overlay), stating the ones skipped as the standing fault
// "settings.unreadable", and pins the stored secrets not yet pinned.
func (s storedSettings) overlay(ctx context.Context, cfg config.Config) (config.Config, error) {
	saved, err := s.st.Settings().StoredSettings(ctx)
	if err != nil {
		return cfg, err
	}
	out, skipped, err := config.Overlay(cfg, saved, openSetting(s.st))
	if err == nil {
		s.pin(ctx, config.Unpinned(saved, out))
	}
	if len(skipped) == 0 {
		s.faults.clear("settings.unreadable")
	} else {
		s.faults.set("settings.unreadable", "stored settings skipped (enter them again on the settings page): "+strings.Join(skipped, "; "))
		s.log.Warn("stored settings skipped", "settings", strings.Join(skipped, "; "))
	}
	return out, err
}

// pin stores the pins binding stored secrets to their endpoints.
func (s storedSettings) pin(ctx context.Context, pins []config.Saved) {
	if len(pins) == 0 {
		return
	}
	if err := s.st.Settings().SetSettings(ctx, pins); err != nil {
		s.log.Warn("stored secrets not bound to their endpoints", "err", err)
	}
}

// openSetting unseals a stored secret with st's key; sealSetting seals one.
func openSetting(st *store.Store) config.Open {
	return func(sealed []byte, section, key string) ([]byte, error) {
		return st.Key().Open(sealed, store.SettingLabel(section, key))
	}
}

func sealSetting(st *store.Store) config.Seal {
	return func(plain []byte, section, key string) []byte {
		return st.Key().Seal(plain, store.SettingLabel(section, key))
	}
}
