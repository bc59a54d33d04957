package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
)

// The settings the admin's page shows and changes: each a key of the config
// file, found in Config by its toml tag. Settings changed on the page are
// stored (secrets sealed) and laid over the file's values at every start and
// reload (Overlay) — except where the file sets the key: the file wins, and
// the page says so (SettingField.FromFile).

type setting struct {
	key, label, help string
	secret           bool
	fileKey          string // a secret's *_file key in the config file
}

var settingSections = []struct {
	name, title string
	fields      []setting
	tests       []string
}{
	{"checks", "Checks", []setting{
		{key: "interval", label: "Check every", help: "each destination, e.g. 15m"},
		{key: "jitter", label: "Jitter", help: "each check up to this much later"},
		{key: "max_concurrent", label: "Checks at once", help: "and never two at once on one file server"},
		{key: "max_failures", label: "Failed logons allowed per account and window", help: "0 replays nothing that can fail"},
		{key: "failure_window", label: "Failure window", help: "the domain's lockout observation window"},
		{key: "timeout", label: "Step timeout"},
		{key: "no_write", label: "Skip the test write", help: "true or false"},
		{key: "event_gap", label: "Event gap", help: "device failures within this of the last triggered check: no new check; a failure naming no destination checks the device's destinations not checked within this"},
	}, nil},
	{"incidents", "Incidents", []setting{
		{key: "close_after", label: "Close after green for", help: "e.g. 3h"},
	}, nil},
	{"snmp", "SNMP", []setting{
		{key: "interval", label: "Poll every"},
		{key: "community", label: "Community", secret: true, fileKey: "community_file", help: "for devices without their own"},
		{key: "cidr", label: "Networks to sweep", help: "comma-separated, e.g. 192.168.10.0/24"},
		{key: "trap_listen", label: "Trap listener", help: "e.g. :162 (needs a trap community or snmp.trap_v3_user)"},
		{key: "trap_community", label: "Trap community", secret: true, fileKey: "trap_community_file"},
		{key: "smtp_listen", label: "Job-log mail listener", help: "e.g. :2525"},
	}, nil},
	{"ad", "Active Directory", []setting{
		{key: "url", label: "DC", help: "ldaps://dc1.example.com or ldap://dc1 (StartTLS)"},
		{key: "bind_user", label: "Service account"},
		{key: "password", label: "Service account password", secret: true, fileKey: "password_file"},
		{key: "ca", label: "CA file"},
		{key: "margin", label: "Logons kept in reserve", help: "1..5 below the lockout threshold"},
		{key: "timeout", label: "Timeout"},
	}, nil},
	{"eventlog", "File servers' event logs", []setting{
		{key: "user", label: "Reading account", help: `DOMAIN\user: read-only ("Event Log Readers" on Windows), never a scan account; after each check it counts the share's connections, after a failed one it reads the server's Security and System logs around it`},
		{key: "password", label: "Reading account password", secret: true, fileKey: "password_file"},
		{key: "before", label: "Read the logs from before a failure", help: "e.g. 10m"},
	}, nil},
	{"notify", "Notifications", []setting{
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

func findSetting(section, key string) (setting, bool) {
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
	return setting{}, false
}

// configField finds the Config field of section.key by its toml tag.
func configField(c *Config, section, key string) (reflect.Value, bool) {
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
func secretField(c *Config, section, key string) *scanwarden.Secret {
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

var durationType = reflect.TypeOf(Duration(0))

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

func fileSets(c Config, key string) bool {
	for _, k := range c.FileKeys {
		if k == key {
			return true
		}
	}
	return false
}
