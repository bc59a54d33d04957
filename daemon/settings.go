package daemon

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/store"
)

// Settings changed in the web page are stored (table stored_settings,
// secrets sealed) and laid over the config file's values at every start and
// reload — except where the file sets the key: the file wins, and the page
// says so (Field.FromFile).

type settingField struct {
	key, label, help string
	secret           bool
	fileKey          string // a secret's *_file key in the config file
}

var settingSections = []struct {
	name, title string
	fields      []settingField
	tests       []string
}{
	{"checks", "Checks", []settingField{
		{key: "interval", label: "Check every", help: "each destination, e.g. 15m"},
		{key: "jitter", label: "Jitter", help: "each check up to this much later"},
		{key: "max_concurrent", label: "Checks at once", help: "and never two at once on one file server"},
		{key: "max_failures", label: "Failed logons allowed per account and window", help: "0 replays nothing that can fail"},
		{key: "failure_window", label: "Failure window", help: "the domain's lockout observation window"},
		{key: "timeout", label: "Step timeout"},
		{key: "no_write", label: "Skip the test write", help: "true or false"},
		{key: "event_gap", label: "Event gap", help: "device failures within this of the last triggered check: no new check; a failure naming no destination checks the device's destinations not checked within this"},
	}, nil},
	{"incidents", "Incidents", []settingField{
		{key: "close_after", label: "Close after green for", help: "e.g. 3h"},
	}, nil},
	{"snmp", "SNMP", []settingField{
		{key: "interval", label: "Poll every"},
		{key: "community", label: "Community", secret: true, fileKey: "community_file", help: "for devices without their own"},
		{key: "cidr", label: "Networks to sweep", help: "comma-separated, e.g. 192.168.10.0/24"},
		{key: "trap_listen", label: "Trap listener", help: "e.g. :162 (needs a trap community or snmp.trap_v3_user)"},
		{key: "trap_community", label: "Trap community", secret: true, fileKey: "trap_community_file"},
		{key: "smtp_listen", label: "Job-log mail listener", help: "e.g. :2525"},
	}, nil},
	{"ad", "Active Directory", []settingField{
		{key: "url", label: "DC", help: "ldaps://dc1.example.com or ldap://dc1 (StartTLS)"},
		{key: "bind_user", label: "Service account"},
		{key: "password", label: "Service account password", secret: true, fileKey: "password_file"},
		{key: "ca", label: "CA file"},
		{key: "margin", label: "Logons kept in reserve", help: "1..5 below the lockout threshold"},
		{key: "timeout", label: "Timeout"},
	}, nil},
	{"eventlog", "File servers' event logs", []settingField{
		{key: "user", label: "Reading account", help: `DOMAIN\user: read-only ("Event Log Readers" on Windows), never a scan account; after each check it counts the share's connections, after a failed one it reads the server's Security and System logs around it`},
		{key: "password", label: "Reading account password", secret: true, fileKey: "password_file"},
		{key: "before", label: "Read the logs from before a failure", help: "e.g. 10m"},
	}, nil},
	{"notify", "Notifications", []settingField{
		{key: "webhook_url", label: "Webhook URL"},
		{key: "webhook_secret", label: "Webhook secret", secret: true, fileKey: "webhook_secret_file"},
		{key: "webhook_secret_header", label: "Secret header"},
		{key: "webhook_attempts", label: "Webhook attempts"},
		{key: "smtp_host", label: "Mail relay"},
		{key: "smtp_port", label: "Relay port"},
		{key: "smtp_tls", label: "TLS", help: "starttls, tls or none"},
		{key: "smtp_user", label: "Relay user"},
		{key: "smtp_password", label: "Relay password", secret: true, fileKey: "smtp_password_file"},
		{key: "smtp_from", label: "From"},
		{key: "mail_to", label: "To", help: "comma-separated addresses"},
	}, []string{"webhook", "mail"}},
}

func findSetting(section, key string) (settingField, bool) {
	for _, s := range settingSections {
		if s.name != section {
			continue
		}
		for _, f := range s.fields {
			if f.key == key {
				return f, true
			}
		}
	}
	return settingField{}, false
}

// configField finds the Config field of section.key by its toml tag.
func configField(c *config.Config, section, key string) (reflect.Value, bool) {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("toml") != section {
			continue
		}
		sv, st := v.Field(i), t.Field(i).Type
		for j := 0; j < st.NumField(); j++ {
			if st.Field(j).Tag.Get("toml") == key {
				return sv.Field(j), true
			}
		}
	}
	return reflect.Value{}, false
}

// secretField is where a stored secret goes in the Config.
func secretField(c *config.Config, section, key string) *scanwarden.Secret {
	switch section + "." + key {
	case "snmp.community":
		return &c.SNMP.Community
	case "snmp.trap_community":
		return &c.SNMP.TrapCommunity
	case "ad.password":
		return &c.AD.Password
	case "eventlog.password":
		return &c.Eventlog.Password
	case "notify.webhook_secret":
		return &c.Notify.WebhookSecret
	case "notify.smtp_password":
		return &c.Notify.SMTPPassword
	}
	return nil
}

var durationType = reflect.TypeOf(config.Duration(0))

func setValue(v reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%q is not a duration (write it like 90s, 15m, 3h)", s)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(s)
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
		v.SetInt(int64(n))
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q: true or false", s)
		}
		v.SetBool(b)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		out := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
		v.Set(reflect.ValueOf(out))
	default:
		return errors.New("not settable here")
	}
	return nil
}

func formatValue(v reflect.Value) string {
	switch {
	case v.Type() == durationType:
		return time.Duration(v.Int()).String()
	case v.Kind() == reflect.Slice:
		return strings.Join(v.Interface().([]string), ", ")
	}
	return fmt.Sprint(v.Interface())
}

func fileSets(c config.Config, key string) bool {
	for _, k := range c.FileKeys {
		if k == key {
			return true
		}
	}
	return false
}

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
// (overlaySettings), stating the ones skipped as the standing fault
// "settings.unreadable".
func (s storedSettings) overlay(ctx context.Context, cfg config.Config) (config.Config, error) {
	stored, err := s.st.Settings().StoredSettings(ctx)
	if err != nil {
		return cfg, err
	}
	out, skipped, err := overlaySettings(cfg, stored, func(sealed []byte, section, key string) ([]byte, error) {
		return s.st.Key().Open(sealed, store.SettingLabel(section, key))
	})
	if err == nil {
		s.pinUnpinned(ctx, stored, out)
	}
	if len(skipped) == 0 {
		s.faults.clear("settings.unreadable")
	} else {
		s.faults.set("settings.unreadable", "stored settings skipped (enter them again on the settings page): "+strings.Join(skipped, "; "))
		s.log.Warn("stored settings skipped", "settings", strings.Join(skipped, "; "))
	}
	return out, err
}

// pinUnpinned binds each stored secret that has no pin row (stored before
// endpoints were pinned) to the endpoint it is used with now, cfg.
func (s storedSettings) pinUnpinned(ctx context.Context, stored []store.StoredSetting, cfg config.Config) {
	var pins []store.StoredSetting
	for _, tie := range secretTies {
		_, pinned := tie.storedPin(stored)
		has := slices.ContainsFunc(stored, func(st store.StoredSetting) bool { return st.Section == tie.section && st.Key == tie.secret })
		if has && !pinned && !secretField(&cfg, tie.section, tie.secret).IsZero() {
			pins = append(pins, tie.pin(cfg))
		}
	}
	if len(pins) == 0 {
		return
	}
	if err := s.st.Settings().SetSettings(ctx, pins); err != nil {
		s.log.Warn("stored secrets not bound to their endpoints", "err", err)
	}
}

// overlaySettings lays stored settings over cfg where the file does not
// set the key; open unseals a stored secret. A stored value that cannot be
// used (a secret that does not open, a value that no longer parses) is
// skipped and named in skipped; the others apply. An endpoint whose secret
// did not open keeps the file's value too. A result that does not validate
// is refused (err) and cfg kept.
func overlaySettings(cfg config.Config, stored []store.StoredSetting, open func(sealed []byte, section, key string) ([]byte, error)) (out config.Config, skipped []string, err error) {
	out = cfg
	out.CIDRCopy()
	var unreadable []string // section.key of secrets that did not open
	var applied []string    // section.key of stored secrets laid over cfg
	for _, s := range stored {
		f, ok := findSetting(s.Section, s.Key)
		if !ok {
			continue
		}
		if f.secret {
			if fileSets(cfg, s.Section+"."+f.fileKey) {
				continue
			}
			plain, err := open([]byte(s.Value), s.Section, s.Key)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s.%s: %v", s.Section, s.Key, err))
				unreadable = append(unreadable, s.Section+"."+s.Key)
				continue
			}
			*secretField(&out, s.Section, s.Key) = scanwarden.NewSecret(string(plain))
			applied = append(applied, s.Section+"."+s.Key)
			continue
		}
		if fileSets(cfg, s.Section+"."+s.Key) {
			continue
		}
		v, ok := configField(&out, s.Section, s.Key)
		if !ok {
			continue
		}
		if err := setValue(v, s.Value); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s.%s: %v", s.Section, s.Key, err))
		}
	}
	// A stored secret entered for another endpoint than the one now in
	// effect (moved in the file) is not sent there: it and the user it
	// goes with are the file's (none) until entered again. One stored
	// before endpoints were pinned has no pin: it is pinned where it is
	// (storedSettings.overlay).
	for _, tie := range secretTies {
		if !slices.Contains(applied, tie.section+"."+tie.secret) {
			continue
		}
		if pin, ok := tie.storedPin(stored); !ok || pin == tie.endpoint(out) {
			continue
		}
		*secretField(&out, tie.section, tie.secret) = *secretField(&cfg, tie.section, tie.secret)
		for _, k := range tie.creds {
			from, _ := configField(&cfg, tie.section, k)
			to, _ := configField(&out, tie.section, k)
			to.Set(from)
		}
		skipped = append(skipped, fmt.Sprintf("%s.%s: entered for another %s than the one now configured, so not sent there: enter it again",
			tie.section, tie.secret, strings.Join(prefixed(tie.section, tie.fields), "/")))
	}
	// An endpoint whose secret did not open is not used either (it would
	// fail, or be used without its secret), nor the user that goes with
	// the secret (a relay user without its password fails validation, and
	// with it every stored setting): the file's values stay.
	for _, tie := range secretTies {
		if !slices.Contains(unreadable, tie.section+"."+tie.secret) {
			continue
		}
		for _, k := range append(slices.Clone(tie.fields), tie.creds...) {
			from, _ := configField(&cfg, tie.section, k)
			to, _ := configField(&out, tie.section, k)
			to.Set(from)
			skipped = append(skipped, fmt.Sprintf("%s.%s: not used without %s.%s", tie.section, k, tie.section, tie.secret))
		}
	}
	if es := out.Validate(); len(es) > 0 {
		return cfg, skipped, es
	}
	return out, skipped, nil
}

// prefixed is keys as section.key.
func prefixed(section string, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = section + "." + k
	}
	return out
}

// f is a setting's label, for messages.
func f(section, key string) string {
	if fd, ok := findSetting(section, key); ok {
		return strings.ToLower(fd.label)
	}
	return section + "." + key
}

// secretTies are the secrets bound to an endpoint: where they are sent.
var secretTies = []secretTie{
	{"ad", "password", []string{"url"}, []string{"bind_user"}},
	{"notify", "webhook_secret", []string{"webhook_url"}, nil},
	{"notify", "smtp_password", []string{"smtp_host", "smtp_port"}, []string{"smtp_user"}},
	{"snmp", "community", []string{"cidr"}, nil},
}

type secretTie struct {
	section, secret string
	fields          []string // the endpoint's settings
	creds           []string // settings that go with the secret (the user it logs on as)
}

// A secret stored from the page is stored with the endpoint it was entered
// for (the row SECTION.SECRET@endpoint, not secret: the endpoint's values),
// so that an endpoint moved by any path — the page, or the config file
// edited and reloaded — never receives it: the overlay drops it when the
// endpoint in effect is another.

// pinKey is the stored row that holds the endpoint t's secret was entered for.
func (t secretTie) pinKey() string { return t.secret + "@endpoint" }

// endpoint is t's endpoint in c, as stored in its pin row.
func (t secretTie) endpoint(c config.Config) string {
	var vs []string
	for _, k := range t.fields {
		v, _ := configField(&c, t.section, k)
		vs = append(vs, formatValue(v))
	}
	return strings.Join(vs, "\n")
}

// pin is the row binding t's secret to its endpoint in c.
func (t secretTie) pin(c config.Config) store.StoredSetting {
	return store.StoredSetting{Section: t.section, Key: t.pinKey(), Value: t.endpoint(c)}
}

// storedPin finds t's pin row among stored.
func (t secretTie) storedPin(stored []store.StoredSetting) (string, bool) {
	for _, s := range stored {
		if s.Section == t.section && s.Key == t.pinKey() {
			return s.Value, true
		}
	}
	return "", false
}

// moved reports whether the endpoint differs between two configs.
func (t secretTie) moved(a, b config.Config) bool {
	for _, k := range t.fields {
		va, _ := configField(&a, t.section, k)
		vb, _ := configField(&b, t.section, k)
		if formatValue(va) != formatValue(vb) {
			return true
		}
	}
	return false
}
