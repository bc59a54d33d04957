// Package config is scanwarden.toml: the file's types, one per section
// (one file each, with that section's validation), its defaults, the
// parsing that names a bad key and its line, the secret files it names, and
// the manual page scanwarden.toml(5) written from the fields' comments. The
// daemon, the CLI, doctor and the benchmarks read a config through it.
package config

import (
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/snmp"
)

// Config is `scanwarden serve`'s configuration: one TOML file, every key
// with a default (Defaults), so that no file at all is a working setup.
// Relative paths are taken from the working directory.
type Config struct {
	// DataDir "" (the default) is store.DataDir's choice, as for every
	// command: $SCANWARDEN_DATA_DIR, the installed box's dir, else
	// ./scanwarden-data (Main.Open resolves it).
	DataDir  string `toml:"data_dir"`
	Listen   string `toml:"listen"`    // the web page, API and /metrics: HOST:PORT (0.0.0.0:8080 for every address)
	LogLevel string `toml:"log_level"` // debug, info, warn, error
	// AllowLinkLocal lets a destination (added, imported) or the webhook
	// name a link-local address (169.254.0.0/16, fe80::/10): where a cloud
	// host's metadata service answers, refused by default.
	AllowLinkLocal bool `toml:"allow_link_local"`

	Checks    Checks    `toml:"checks"`
	Incidents Incidents `toml:"incidents"`
	SNMP      SNMP      `toml:"snmp"`
	AD        AD        `toml:"ad"`
	Notify    Notify    `toml:"notify"`
	Receiver  Receiver  `toml:"receiver"`
	Web       Web       `toml:"web"`
	Warnings  Warnings  `toml:"warnings"`
	Eventlog  Eventlog  `toml:"eventlog"`

	// File is the file the config was read from ("" for defaults only);
	// FileKeys the keys it set ("checks.interval"): where both the file and
	// a setting stored through the web page set a key, the file wins.
	File     string   `toml:"-"`
	FileKeys []string `toml:"-"`
}

// Duration is a time.Duration written "15m", "90s" in the file.
type Duration time.Duration

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (write it like \"90s\", \"15m\", \"3h\")", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// D is the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Defaults returns the configuration used for every key the file leaves out.
func Defaults() Config {
	watch := snmp.DefaultWatcherConfig()
	return Config{
		Listen:   "127.0.0.1:8080",
		LogLevel: "info",
		Checks: Checks{Interval: Duration(15 * time.Minute), Jitter: Duration(90 * time.Second), MaxConcurrent: 4,
			MaxFailures: smbcheck.DefaultMaxFailures, FailureWindow: Duration(smbclient.DefaultWindow), Timeout: Duration(smbclient.DefaultTimeout),
			EventGap: Duration(time.Minute)},
		Incidents: Incidents{CloseAfter: Duration(3 * time.Hour)},
		SNMP:      SNMP{Interval: Duration(watch.Poller.Interval)},
		AD:        AD{Margin: ad.DefaultMargin, Timeout: Duration(ad.DefaultTimeout)},
		Eventlog:  Eventlog{Before: Duration(10 * time.Minute)},
		Notify: Notify{WebhookSecretHeader: "X-Scanwarden-Secret", WebhookAttempts: 5, WebhookBackoff: Duration(2 * time.Second),
			SMTPPort: 587, SMTPTLS: "starttls"},
		Warnings: defaultWarnings(),
		Receiver: Receiver{Share: samba.DefaultShare, Account: samba.DefaultAccount, SmbdDir: DefaultSmbdDir,
			Quiet: Duration(receiver.DefaultWatch.Quiet), Retry: Duration(receiver.DefaultForward.Retry),
			MaxRetry: Duration(receiver.DefaultForward.MaxRetry), Retention: Duration(receiver.DefaultForward.Retention),
			BridgeStuckAfter: Duration(bridge.StuckAfter)},
	}
}

// CIDRCopy unshares the slices a copy of the config would share.
func (c *Config) CIDRCopy() {
	c.SNMP.CIDR = append([]string(nil), c.SNMP.CIDR...)
	c.Checks.WINS = append([]string(nil), c.Checks.WINS...)
	c.SNMP.Allow = append([]string(nil), c.SNMP.Allow...)
	c.Notify.MailTo = append([]string(nil), c.Notify.MailTo...)
	c.FileKeys = append([]string(nil), c.FileKeys...)
}
