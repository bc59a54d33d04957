package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaultsRun(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "" || c.Listen != "127.0.0.1:8080" || c.Checks.Interval.D() != 15*time.Minute ||
		c.Checks.MaxConcurrent != 4 || c.Incidents.CloseAfter.D() != 3*time.Hour || c.SNMP.Community.Reveal() != "public" {
		t.Fatalf("defaults: %+v", c)
	}
	if es := c.Validate(); len(es) > 0 {
		t.Fatalf("defaults invalid: %v", es)
	}
}

func TestParseConfig(t *testing.T) {
	full := `# a full file
data_dir = "/var/lib/scanwarden"
listen = "0.0.0.0:8443"

[checks]
interval = "5m"
jitter = "30s"
max_concurrent = 2
max_failures = 0   # zero means zero: replay nothing that can fail
wins = ["10.0.0.5"]

[incidents]
close_after = "1h"

[snmp]
interval = "30s"
trap_listen = ":162"
trap_community_file = "/etc/scanwarden/trap.community"
cidr = [
  "192.168.10.0/24",
  "192.168.11.0/24",
]

[notify]
webhook_url = "https://hooks.example/x"
smtp_host = "mail.office.test"
smtp_from = "scanwarden@office.test"
mail_to = ["admin@office.test"]
`
	c, err := Parse("s.toml", []byte(full+"\n[warnings]\npassword_days = 0 # zero turns it off\ndisk_floor_bytes = 1073741824\n"))
	if err != nil {
		t.Fatal(err)
	}
	if th := c.Warnings.Thresholds(); th.PasswordDays != 0 || th.DiskFloorBytes != 1<<30 || th.AccountDays != 14 || th.DiskPercent != 5 {
		t.Fatalf("warnings %+v", th)
	}
	if c.Checks.MaxFailures != 0 || c.Checks.Interval.D() != 5*time.Minute || c.Incidents.CloseAfter.D() != time.Hour ||
		len(c.SNMP.CIDR) != 2 || c.Notify.SMTPPort != 587 || c.Checks.Timeout.D() != 10*time.Second ||
		len(c.Checks.WINSServers()) != 1 || c.Checks.WINSServers()[0].String() != "10.0.0.5" {
		t.Fatalf("%+v", c)
	}
	if !contains(c.FileKeys, "checks.max_failures") || !contains(c.FileKeys, "snmp.cidr") || contains(c.FileKeys, "checks.timeout") {
		t.Fatalf("file keys %v", c.FileKeys)
	}

	tests := []struct {
		name, in, key string
		line          int
		reason        string
	}{
		{"unknown key", "listen = \"127.0.0.1:1\"\n[checks]\nintervall = \"5m\"\n", "checks.intervall", 3, "unknown key"},
		{"unknown table", "\n\n[chekcs]\ninterval = \"5m\"\n", "chekcs", 3, "unknown key"},
		{"bad duration", "[checks]\n\ninterval = \"5 minutes\"\n", "checks.interval", 3, "not a duration"},
		{"wrong type", "[checks]\nmax_concurrent = \"four\"\n", "checks.max_concurrent", 2, "want a whole number, not a string"},
		{"out of range", "[checks]\nmax_concurrent = 0\n", "checks.max_concurrent", 2, "1..64"},
		{"negative budget", "[checks]\nmax_failures = -1\n", "checks.max_failures", 2, "0 (replay nothing"},
		{"interval too short", "[checks]\ninterval = \"1s\"\n", "checks.interval", 2, "at least 10s"},
		{"bare number as duration", "[checks]\n\ninterval = 15\n", "checks.interval", 3, `a duration needs its unit: write "15s" or "15m"`},
		{"bare float as duration", "[receiver]\nquiet = 2.5\n", "receiver.quiet", 2, "needs its unit"},
		{"listen without host", "listen = \":8080\"\n", "listen", 1, "name the address"},
		{"listen no port", "listen = \"localhost\"\n", "listen", 1, "HOST:PORT"},
		{"trap port", "[snmp]\ntrap_listen = \":99999\"\n", "snmp.trap_listen", 2, "0..65535"},
		{"trap listener without community", "[snmp]\ntrap_listen = \":162\"\n", "snmp.trap_listen", 2, "needs snmp.trap_community_file"},
		{"trap v3 user without listener", "[snmp]\ntrap_v3_user = \"u\"\ntrap_v3_auth_file = \"x\"\n", "snmp.trap_v3_user", 2, "needs snmp.trap_listen"},
		{"trap v3 user without auth", "[snmp]\ntrap_listen = \":162\"\ntrap_v3_user = \"u\"\n", "snmp.trap_v3_user", 3, "noAuth traps are not taken"},
		{"trap v3 auth without user", "[snmp]\ntrap_listen = \":162\"\ntrap_community_file = \"c\"\ntrap_v3_auth_file = \"x\"\n", "snmp.trap_v3_auth_file", 4, "needs snmp.trap_v3_user"},
		{"trap v3 bad proto", "[snmp]\ntrap_listen = \":162\"\ntrap_v3_user = \"u\"\ntrap_v3_auth_file = \"x\"\ntrap_v3_auth_proto = \"SHA1024\"\n", "snmp.trap_v3_user", 3, "auth protocol"},
		{"wins junk", "[checks]\nwins = [\"10.0.0.5\", \"dc1\"]\n", "checks.wins", 2, "an IPv4 address"},
		{"wins IPv6", "[checks]\nwins = [\"fd00::5\"]\n", "checks.wins", 2, "an IPv4 address"},
		{"cidr too big", "[snmp]\ncidr = [\"10.0.0.0/8\"]\n", "snmp.cidr", 2, "1,024"},
		{"cidr junk", "[snmp]\n\ncidr = [\"office\"]\n", "snmp.cidr", 3, "not a network"},
		{"allow junk", "[snmp]\nsmtp_listen = \":2525\"\nallow = [\"relay\"]\n", "snmp.allow", 3, "not a network"},
		{"receiver allow junk", "[receiver]\nallow = [\"10.0.0.5\", \"mfp-floor2\"]\n", "receiver.allow", 2, "not an address or a network"},
		{"allow without listener", "[snmp]\nallow = [\"10.0.0.5/32\"]\n", "snmp.allow", 2, "needs snmp.trap_listen"},
		{"ad without user", "[ad]\nurl = \"ldaps://dc1\"\npassword_file = \"x\"\n", "ad.bind_user", 0, "needed with ad.url"},
		{"ad scheme", "[ad]\nurl = \"http://dc1\"\nbind_user = \"u\"\npassword_file = \"x\"\n", "ad.url", 2, "ldaps://"},
		{"webhook scheme", "[notify]\nwebhook_url = \"ftp://x?token=SECRET\"\n", "notify.webhook_url", 2, "http(s)"},
		{"mail without from", "[notify]\nsmtp_host = \"m\"\nmail_to = [\"a@b\"]\n", "notify.smtp_from", 0, "needed"},
		{"tls mode", "[notify]\nsmtp_tls = \"ssl\"\n", "notify.smtp_tls", 2, "starttls, tls or none"},
		{"log level", "log_level = \"verbose\"\n", "log_level", 1, "debug, info"},
		{"warnings negative days", "[warnings]\npassword_days = -1\n", "warnings.password_days", 2, "0 (off)"},
		{"warnings percent", "[warnings]\n\ndisk_percent = 100\n", "warnings.disk_percent", 3, "0 (off) .. 99"},
		{"bridge stuck zero", "[receiver]\nbridge_stuck_after = \"0s\"\n", "receiver.bridge_stuck_after", 2, "from 1m0s to 168h0m0s"},
		{"bridge stuck negative", "[receiver]\n\nbridge_stuck_after = \"-5m\"\n", "receiver.bridge_stuck_after", 3, "from 1m0s"},
		{"bridge stuck absurd", "[receiver]\nbridge_stuck_after = \"720h\"\n", "receiver.bridge_stuck_after", 2, "to 168h0m0s"},
		{"bridge stuck within the back-off", "[receiver]\nbridge_stuck_after = \"5m\"\n", "receiver.bridge_stuck_after", 2, "more than receiver.max_retry (30m0s)"},
		{"syntax", "[checks\ninterval = \"5m\"\n", "", 1, "expected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("s.toml", []byte(tc.in))
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("want ConfigErrors, got %T %v", err, err)
			}
			e := es[0]
			if e.Field != tc.key || e.Line != tc.line || !strings.Contains(e.Reason, tc.reason) || e.File != "s.toml" {
				t.Fatalf("got key %q line %d reason %q; want %q %d %q", e.Field, e.Line, e.Reason, tc.key, tc.line, tc.reason)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error shows the webhook URL's token: %v", err)
			}
			if tc.line > 0 && !strings.Contains(err.Error(), "s.toml:") {
				t.Fatalf("error does not name file:line: %v", err)
			}
		})
	}
}

// TestBridgeStuckAfter: [receiver] bridge_stuck_after is an hour unless the
// file says otherwise, and a value the file sets is the one read and
// written back.
func TestBridgeStuckAfter(t *testing.T) {
	if d := Defaults().Receiver.BridgeStuckAfter.D(); d != time.Hour {
		t.Fatalf("default %v, want 1h", d)
	}
	c, err := Parse("s.toml", []byte("[receiver]\nmax_retry = \"2m\"\nbridge_stuck_after = \"5m\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Receiver.BridgeStuckAfter.D(); d != 5*time.Minute || !contains(c.FileKeys, "receiver.bridge_stuck_after") {
		t.Fatalf("read %v (file keys %v), want 5m", d, c.FileKeys)
	}
	b, err := c.Receiver.BridgeStuckAfter.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("s.toml", []byte("[receiver]\nmax_retry = \"2m\"\nbridge_stuck_after = \""+string(b)+"\"\n"))
	if err != nil || again.Receiver.BridgeStuckAfter != c.Receiver.BridgeStuckAfter {
		t.Fatalf("round trip through %q: %v, %v", b, again.Receiver.BridgeStuckAfter.D(), err)
	}
}

func TestJitterFollowsShortInterval(t *testing.T) {
	c, err := Parse("s.toml", []byte("[checks]\ninterval = \"30s\"\n"))
	if err != nil || c.Checks.Jitter.D() != 3*time.Second {
		t.Fatalf("%v %v", c.Checks.Jitter.D(), err)
	}
	if _, err := Parse("s.toml", []byte("[checks]\ninterval = \"30s\"\njitter = \"1m\"\n")); err == nil {
		t.Fatal("a jitter set above the interval accepted")
	}
}

func TestUnknownKeysAllNamed(t *testing.T) {
	_, err := Parse("s.toml", []byte("lisen = \"x\"\n[snmp]\ncommunity = \"public\"\n"))
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 || es[0].Line != 1 || es[1].Field != "snmp.community" || es[1].Line != 3 {
		t.Fatalf("%v", err)
	}
}

func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "hook.secret")
	os.WriteFile(hook, []byte("s3cret-value\n"), 0o600)
	cfg := filepath.Join(dir, "s.toml")
	os.WriteFile(cfg, []byte("[notify]\nwebhook_url = \"http://127.0.0.1:9/\"\nwebhook_secret_file = \""+hook+"\"\n\n[snmp]\ncommunity_file = \""+filepath.Join(dir, "missing")+"\"\n"), 0o600)
	_, err := Load(cfg)
	var es Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Field != "snmp.community_file" || es[0].Line != 6 || !strings.Contains(es[0].Reason, "no such file") {
		t.Fatalf("%v", err)
	}
	os.WriteFile(cfg, []byte("[notify]\nwebhook_url = \"http://127.0.0.1:9/\"\nwebhook_secret_file = \""+hook+"\"\n"), 0o600)
	c, err := Load(cfg)
	if err != nil || c.Notify.WebhookSecret.Reveal() != "s3cret-value" {
		t.Fatalf("%v %v", err, c.Notify.WebhookSecret)
	}
	if _, err := Load(filepath.Join(dir, "nope.toml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
