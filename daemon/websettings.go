package daemon

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
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
	cfg := b.current()
	var out []config.SettingsSection
	for _, s := range settingSections {
		sec := config.SettingsSection{Name: s.name, Title: s.title, Tests: s.tests}
		for _, f := range s.fields {
			wf := config.SettingField{Key: f.key, Label: f.label, Help: f.help, Secret: f.secret}
			if f.secret {
				wf.Set = !secretField(&cfg, s.name, f.key).IsZero()
				wf.FromFile = fileSets(cfg, s.name+"."+f.fileKey)
			} else if v, ok := configField(&cfg, s.name, f.key); ok {
				wf.Value = formatValue(v)
				wf.FromFile = fileSets(cfg, s.name+"."+f.key)
			}
			if wf.FromFile {
				wf.Help = strings.TrimSpace(wf.Help + " — set in " + cfg.File + ", which wins at start")
			}
			sec.Fields = append(sec.Fields, wf)
		}
		out = append(out, sec)
	}
	return out, nil
}

// Set checks the values against the running config, stores them, and
// rebuilds the parts with them.
func (b settingsBackend) Set(ctx context.Context, section string, values map[string]string) error {
	cfg := b.current()
	cfg.CIDRCopy()
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var rows []store.StoredSetting
	for _, k := range keys {
		val := values[k]
		f, ok := findSetting(section, k)
		if !ok {
			return web.BadSetting(section, k, val, "no such setting")
		}
		if f.secret {
			if val == "" {
				continue // keep the stored one
			}
			*secretField(&cfg, section, k) = scanwarden.NewSecret(val)
			sealed := b.m.st.Key().Seal([]byte(val), store.SettingLabel(section, k))
			rows = append(rows, store.StoredSetting{Section: section, Key: k, Value: string(sealed), Secret: true})
			continue
		}
		v, _ := configField(&cfg, section, k)
		if err := setValue(v, val); err != nil {
			return web.BadSetting(section, k, val, err.Error())
		}
		rows = append(rows, store.StoredSetting{Section: section, Key: k, Value: val})
	}
	// A secret belongs to its endpoint: moving the endpoint without
	// entering the secret again drops the stored one, so it is never sent
	// to the new place (and a secret from the file refuses the move).
	before := b.current()
	var dropped []secretTie
	for _, tie := range secretTies {
		if tie.section != section || values[tie.secret] != "" || !tie.moved(before, cfg) {
			continue
		}
		f, _ := findSetting(section, tie.secret)
		if fileSets(before, section+"."+f.fileKey) {
			return web.BadSetting(section, tie.fields[0], values[tie.fields[0]], fmt.Sprintf("%s.%s comes from %s and stays with the endpoint set there; change both in the file", section, tie.secret, before.File))
		}
		if secretField(&cfg, section, tie.secret).IsZero() {
			continue
		}
		*secretField(&cfg, section, tie.secret) = scanwarden.Secret{}
		rows = append(rows, store.StoredSetting{Section: section, Key: tie.secret, Delete: true},
			store.StoredSetting{Section: section, Key: tie.pinKey(), Delete: true})
		dropped = append(dropped, tie)
	}
	// A secret entered now belongs to the endpoint it was entered with.
	for _, tie := range secretTies {
		if tie.section == section && values[tie.secret] != "" {
			rows = append(rows, tie.pin(cfg))
		}
	}
	if es := cfg.Validate(); len(es) > 0 {
		e := es[0]
		for _, tie := range dropped {
			if strings.HasPrefix(e.Field, section+"."+tie.secret) {
				// The endpoint cannot work without its secret: ask for it
				// again rather than drop it (nothing is changed).
				return web.BadSetting(section, tie.secret, nil, fmt.Sprintf("%s changed: enter the %s again (a stored secret is never sent to a new endpoint)",
					strings.Join(tie.fields, "/"), f(section, tie.secret)))
			}
		}
		sec, field, _ := strings.Cut(e.Field, ".")
		return web.BadSetting(sec, field, e.Value, e.Reason)
	}
	if err := b.m.st.Settings().SetSettings(ctx, rows); err != nil {
		return err
	}
	for _, tie := range dropped {
		b.m.log.Warn("stored secret dropped: its endpoint changed", "setting", section+"."+tie.secret)
	}
	return b.m.Reload()
}

// SendTest sends a test notification on one channel and records it.
func (b settingsBackend) SendTest(ctx context.Context, channel string) (string, error) {
	senders, errs := Senders(b.current())
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
		b.m.st.AddNotification(context.WithoutCancel(ctx), rec)
		if outs[0].Err != nil {
			return "", outs[0].Err
		}
		return fmt.Sprintf("%s: test delivered (%d attempt(s))", channel, outs[0].Attempts), nil
	}
	return "", fmt.Errorf("%s is not configured", channel)
}
