package snmp

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/scanwarden/scanwarden"
	"io"
	"net/netip"
	"strings"
	"time"
)

// Duration is a time.Duration that reads and writes "90s", "5m" in JSON.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New(`want a duration string such as "90s"`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Config is the snmp part of scanwarden's configuration: one typed struct
// with defaults (Defaults) and a validation that names the bad field.
type Config struct {
	Community   scanwarden.Secret `json:"community"`    // v1/v2c community for polled devices
	Version     Version           `json:"version"`      // 1, 2c (default) or 3
	V3          *V3Auth           `json:"v3,omitempty"` // v3 user for polled devices
	Timeout     Duration          `json:"timeout"`      // per request (default 2s)
	Retries     int               `json:"retries"`      // per request (default 1)
	Hosts       []string          `json:"hosts"`        // HOST[:PORT] entries
	Networks    []string          `json:"networks"`     // CIDRs to sweep for devices (bounded)
	MaxSweep    int               `json:"max_sweep"`    // most addresses a sweep may try (default 1024)
	SweepRate   int               `json:"sweep_rate"`   // sweep requests per second (default 50)
	DedupWindow Duration          `json:"dedup_window"` // default 30m

	Poller struct {
		Workers        int      `json:"workers"`
		Interval       Duration `json:"interval"`
		MaxRepetitions int      `json:"max_repetitions"`
		IdentifyEvery  Duration `json:"identify_every"`
		BackoffMax     Duration `json:"backoff_max"`
		RescanEvery    int      `json:"rescan_every"`
	} `json:"poller"`

	Traps struct {
		Addr        string              `json:"addr"` // "" = off; e.g. ":162"
		Communities []scanwarden.Secret `json:"communities"`
	} `json:"traps"`

	Mail struct {
		Addr    string            `json:"addr"`    // "" = off; e.g. ":2525"
		Senders map[string]string `json:"senders"` // sender address -> device HOST:PORT
	} `json:"mail"`

	Rules []Rule `json:"rules"` // admin rules, tried before the defaults
}

// Defaults returns a Config with every default filled in.
func Defaults() Config {
	var c Config
	c.Community = scanwarden.NewSecret("public")
	c.Version = V2c
	c.Timeout = Duration(DefaultTimeout)
	c.Retries = DefaultRetries
	c.MaxSweep = 1024
	c.SweepRate = 50
	c.DedupWindow = Duration(30 * time.Minute)
	c.Poller.Workers = 32
	c.Poller.Interval = Duration(time.Minute)
	c.Poller.MaxRepetitions = 8
	c.Poller.IdentifyEvery = Duration(24 * time.Hour)
	c.Poller.BackoffMax = Duration(30 * time.Minute)
	c.Poller.RescanEvery = 10
	return c
}

// ParseConfig reads JSON over the defaults and validates it.
func ParseConfig(r io.Reader) (Config, error) {
	c := Defaults()
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("snmp config: %w", err)
	}
	return c, c.Validate()
}

// PollerConfig returns the poller part.
func (c Config) PollerConfig() PollerConfig {
	return PollerConfig{Workers: c.Poller.Workers, Interval: time.Duration(c.Poller.Interval),
		MaxRepetitions: c.Poller.MaxRepetitions, IdentifyEvery: time.Duration(c.Poller.IdentifyEvery),
		BackoffMax: time.Duration(c.Poller.BackoffMax), RescanEvery: c.Poller.RescanEvery}
}

// Target returns the target for one HOST[:PORT] with the config's credentials.
func (c Config) Target(hostport string) (Target, error) {
	host, port, err := ParseHostPort(hostport)
	if err != nil {
		return Target{}, err
	}
	t := Target{Host: host, Port: port, Version: c.Version, Community: c.Community, V3: c.V3,
		Timeout: time.Duration(c.Timeout), Retries: c.Retries}
	if t.Version != V3 {
		t.V3 = nil
	}
	return t, t.Validate()
}

// Validate names the first bad field.
func (c Config) Validate() error {
	if err := c.PollerConfig().Validate(); err != nil {
		return fmt.Errorf("snmp config: %w", err)
	}
	if c.MaxSweep < 1 || c.MaxSweep > 65536 {
		return fmt.Errorf("snmp config: max_sweep %d out of range (1..65536)", c.MaxSweep)
	}
	if c.SweepRate < 1 || c.SweepRate > 1000 {
		return fmt.Errorf("snmp config: sweep_rate %d out of range (1..1000)", c.SweepRate)
	}
	for i, h := range c.Hosts {
		if _, err := c.Target(h); err != nil {
			return fmt.Errorf("snmp config: hosts[%d]: %w", i, err)
		}
	}
	for i, n := range c.Networks {
		p, err := netip.ParsePrefix(strings.TrimSpace(n))
		if err != nil {
			return fmt.Errorf("snmp config: networks[%d]: %w", i, err)
		}
		if size := prefixSize(p); size > uint64(c.MaxSweep) {
			return fmt.Errorf("snmp config: networks[%d]: %s has %d addresses, more than max_sweep %d", i, p, size, c.MaxSweep)
		}
	}
	if _, err := NewRules(DefaultCodeBook(), c.Rules); err != nil {
		return fmt.Errorf("snmp config: %w", err)
	}
	for from := range c.Mail.Senders {
		if !strings.Contains(from, "@") {
			return fmt.Errorf("snmp config: mail.senders: %q is not an e-mail address", from)
		}
	}
	return nil
}

// NewRules compiles the admin rules followed by the embedded defaults.
func NewRules(book *CodeBook, admin []Rule) (*Rules, error) {
	return ParseRules(strings.NewReader(string(rulesJSON)), book, admin)
}
