package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/notify"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

// The settings page's backend: it shows the running config's values,
// checks and stores what the admin enters (settings.go lays them over the
// file's at every start and reload), and sends test notifications.

// settingsBackend implements web.Settings.
type settingsBackend struct{ m *Main }

var _ web.Settings = settingsBackend{}

func (b settingsBackend) current() config.Config {
	if p := b.m.live.get(); p != nil {
		return p.cfg
	}
	return *b.m.Config
}

func (b settingsBackend) Settings(ctx context.Context) ([]config.SettingsSection, error) {
	return b.current().Settings(), nil
}

// Set checks the values against the running config (config.Edit), stores
// them, and rebuilds the parts with them.
func (b settingsBackend) Set(ctx context.Context, section string, values map[string]string) error {
	e, err := b.current().Edit(section, values, sealSetting(b.m.st))
	if err != nil {
		return badSetting(err)
	}
	if err := b.m.st.Settings().SetSettings(ctx, e.Rows); err != nil {
		return err
	}
	for _, setting := range e.Dropped {
		b.m.log.Warn("stored secret dropped: its endpoint changed", "setting", setting)
	}
	return b.m.Reload()
}

// badSetting is config's error about a setting as the page's.
func badSetting(err error) error {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err
	}
	section, key, _ := strings.Cut(ce.Field, ".")
	return web.BadSetting(section, key, ce.Value, ce.Reason)
}

// SendTest sends a test notification on one channel and records it.
func (b settingsBackend) SendTest(ctx context.Context, channel string) (string, error) {
	senders, errs := b.current().Notify.Senders()
	if err := errs[channel]; err != nil {
		return "", err
	}
	for _, s := range senders {
		if s.Channel() != channel {
			continue
		}
		outs := notify.New(s).Send(ctx, notify.TestMessage(time.Now()))
		rec := store.Notification{At: time.Now(), Event: "test", Channel: channel, Attempts: outs[0].Attempts}
		if outs[0].Err != nil {
			rec.Error = outs[0].Err.Error()
		}
		b.m.st.Incidents().AddNotification(context.WithoutCancel(ctx), rec)
		if outs[0].Err != nil {
			return "", outs[0].Err
		}
		return fmt.Sprintf("%s: test delivered (%d attempt(s))", channel, outs[0].Attempts), nil
	}
	return "", fmt.Errorf("%s is not configured", channel)
}
