package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/scanwarden/scanwarden/registry"
)

// badValue records a bad value of key with the reason.
type badValue func(key string, value any, reason string)

// Validate checks every section; each error names its key.
func (c *Config) Validate() Errors {
	var es Errors
	bad := func(key string, value any, reason string) {
		es = append(es, configError("", 0, key, fmt.Sprint(value), reason))
	}
	c.validateTop(bad)
	c.Web.validate(bad)
	c.Checks.validate(bad)
	c.Warnings.validate(bad)
	c.Incidents.validate(bad)
	c.SNMP.validate(bad)
	c.AD.validate(bad)
	c.Notify.validate(bad)
	if u, err := url.Parse(c.Notify.WebhookURL); err == nil && !c.AllowLinkLocal && registry.LinkLocal(u.Hostname()) {
		bad("notify.webhook_url", "(hidden)", registry.LinkLocalReason)
	}
	c.Receiver.validate(bad)
	c.Eventlog.validate(bad)
	return es
}

// validateTop checks the top-level keys.
func (c *Config) validateTop(bad badValue) {
	if c.DataDir != "" && strings.TrimSpace(c.DataDir) == "" {
		bad("data_dir", strconv.Quote(c.DataDir), "blank (leave it out, or \"\", for the default)")
	}
	if err := checkListen(c.Listen, false); err != nil {
		bad("listen", strconv.Quote(c.Listen), err.Error())
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level", strconv.Quote(c.LogLevel), "debug, info, warn or error")
	}
}

// checkListen accepts HOST:PORT (port 0 lets the system choose).
func checkListen(addr string, emptyHostOK bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want HOST:PORT, e.g. 127.0.0.1:8080")
	}
	if host == "" && !emptyHostOK {
		return errors.New("name the address to listen on (0.0.0.0:8080 for every interface)")
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return errors.New("port must be 0..65535")
	}
	return nil
}
