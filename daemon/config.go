package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/registry"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/warning"
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

	Checks    ChecksConfig    `toml:"checks"`
	Incidents IncidentsConfig `toml:"incidents"`
	SNMP      SNMPConfig      `toml:"snmp"`
	AD        ADConfig        `toml:"ad"`
	Notify    NotifyConfig    `toml:"notify"`
	Receiver  ReceiverConfig  `toml:"receiver"`
	Web       WebConfig       `toml:"web"`
	Warnings  WarningsConfig  `toml:"warnings"`
	Eventlog  EventlogConfig  `toml:"eventlog"`

	// File is the file the config was read from ("" for defaults only);
	// FileKeys the keys it set ("checks.interval"): where both the file and
	// a setting stored through the web page set a key, the file wins.
	File     string   `toml:"-"`
	FileKeys []string `toml:"-"`
}

// ChecksConfig is [checks]: the scheduler.
type ChecksConfig struct {
	Interval Duration `toml:"interval"` // every destination is checked this often
	Jitter   Duration `toml:"jitter"`   // each check lands up to this much later, spreading the load
	// MaxConcurrent is the cap on checks running at once; at most one runs
	// at a time per file server whatever this says.
	MaxConcurrent int `toml:"max_concurrent"`
	// MaxFailures is the failed-logon budget per account and 30 minutes, as
	// `check --max-failures`; 0 replays nothing that can fail.
	MaxFailures int `toml:"max_failures"`
	// FailureWindow is the budget's window: set it to the domain's lockout
	// observation window when that is longer than 30 minutes.
	FailureWindow Duration `toml:"failure_window"`
	Timeout       Duration `toml:"timeout"`  // per network step
	NoWrite       bool     `toml:"no_write"` // skip the canary write
	// EventGap: device failures for one destination within this span of its
	// last event-triggered check trigger no further check (a burst of 1102s
	// is one check); a failure that names no destination checks the
	// device's destinations whose last check is older than this.
	EventGap Duration `toml:"event_gap"`
}

// IncidentsConfig is [incidents].
type IncidentsConfig struct {
	CloseAfter Duration `toml:"close_after"` // green this long, with no device failure, closes an incident
}

// SNMPConfig is [snmp]: the watch loop over the registry's devices.
type SNMPConfig struct {
	Interval          Duration `toml:"interval"`            // how often every device is polled
	CommunityFile     string   `toml:"community_file"`      // "" = community "public"
	TrapListen        string   `toml:"trap_listen"`         // "" = off, e.g. ":162"
	TrapCommunityFile string   `toml:"trap_community_file"` // file holding the community traps must carry (trap_listen needs it or trap_v3_user)
	// An SNMPv3 user whose traps are taken, beside or instead of the
	// community: authNoPriv, or authPriv with trap_v3_priv_file; never noAuth.
	TrapV3User      string   `toml:"trap_v3_user"`
	TrapV3AuthProto string   `toml:"trap_v3_auth_proto"` // "" = SHA
	TrapV3AuthFile  string   `toml:"trap_v3_auth_file"`  // file holding trap_v3_user's auth password (required with it: noAuth traps are never taken)
	TrapV3PrivProto string   `toml:"trap_v3_priv_proto"` // "" = AES
	TrapV3PrivFile  string   `toml:"trap_v3_priv_file"`  // "" = authNoPriv
	SMTPListen      string   `toml:"smtp_listen"`        // "" = off, e.g. ":2525"
	CIDR            []string `toml:"cidr"`               // networks swept for Kyocera devices
	Allow           []string `toml:"allow"`              // networks whose traps and mail are taken besides the devices' (a mail relay)
	RulesFile       string   `toml:"rules_file"`         // a YAML file of send-failure rules replacing the built-in ones ("" = built in)

	Community     scanwarden.Secret `toml:"-"`
	TrapCommunity scanwarden.Secret `toml:"-"`
	TrapV3Auth    scanwarden.Secret `toml:"-"`
	TrapV3Priv    scanwarden.Secret `toml:"-"`
}

// TrapV3 is the configured SNMPv3 trap user, nil when none.
func (s SNMPConfig) TrapV3() *snmp.V3Auth {
	if s.TrapV3User == "" {
		return nil
	}
	return &snmp.V3Auth{User: s.TrapV3User, AuthProto: s.TrapV3AuthProto, AuthPass: s.TrapV3Auth,
		PrivProto: s.TrapV3PrivProto, PrivPass: s.TrapV3Priv}
}

// ADConfig is [ad]; off while url is empty.
type ADConfig struct {
	URL           string   `toml:"url"`            // the DC: ldaps://dc1.example.com, or ldap://dc1 (StartTLS); "" = Active Directory not asked
	BindUser      string   `toml:"bind_user"`      // the read-only service account that reads accounts and policy
	PasswordFile  string   `toml:"password_file"`  // file holding bind_user's password
	CA            string   `toml:"ca"`             // PEM file of the CA that signed the DC's certificate ("" = the system's)
	InsecurePlain bool     `toml:"insecure_plain"` // allow a plain LDAP bind without TLS (lab only)
	Margin        int      `toml:"margin"`         // failed logons kept in reserve below the domain's lockout threshold (1..5)
	Timeout       Duration `toml:"timeout"`        // per LDAP request

	Password scanwarden.Secret `toml:"-"`
}

// EventlogConfig is [eventlog]: the read-only account that, after each
// check, counts the destination share's connections (the session-limit
// pattern) and, after a failed one, reads the file server's own event logs
// around it (Security 4625/4776/4740 for the scan account or the MFP,
// System 2017/2019/2020 and starts) over \pipe\eventlog. Off while user is
// empty. Never the scan account: its logons would count against that
// account's failed-logon budget (a check refuses it and says so).
type EventlogConfig struct {
	User         string `toml:"user"`          // the read-only account that, after each check, counts the share's connections over \pipe\srvsvc and, after a failed one, reads the server's Security and System logs around it over \pipe\eventlog (4625, 4776, 4740, 2017/2019/2020, starts): evidence beside the verdict. DOMAIN\user; on Windows a member of "Event Log Readers" (the Security log also needs "Manage auditing and security log"), on Samba an admin user with "eventlog list". Never the scan account: its logons would count against that account's failed-logon budget. "" = no server's event log is read
	PasswordFile string `toml:"password_file"` // file holding user's password
	// Servers gives some file servers an account of their own, each
	// "HOST USER PASSWORD_FILE" (HOST as the destinations name it).
	Servers []string `toml:"servers"`
	Before  Duration `toml:"before"` // how far before a failed check the logs are read

	Password scanwarden.Secret `toml:"-"`
	// ServerAccounts are Servers read: host → user and password.
	ServerAccounts map[string]EventlogAccount `toml:"-"`
}

// EventlogAccount is one reading account.
type EventlogAccount struct {
	User     string
	Password scanwarden.Secret
}

// serverEntry splits one [eventlog] servers entry.
func serverEntry(e string) (host, user, file string, ok bool) {
	f := strings.Fields(e)
	if len(f) != 3 {
		return "", "", "", false
	}
	return f[0], f[1], f[2], true
}

// validate checks [eventlog].
func (e EventlogConfig) validate(bad badValue) {
	if e.User != "" && e.PasswordFile == "" && e.Password.IsZero() {
		bad("eventlog.password_file", `""`, "needed with eventlog.user")
	}
	if e.User == "" && e.PasswordFile != "" {
		bad("eventlog.user", `""`, "needed with eventlog.password_file")
	}
	for _, s := range e.Servers {
		if _, _, _, ok := serverEntry(s); !ok {
			bad("eventlog.servers", strconv.Quote(s), "want \"HOST USER PASSWORD_FILE\"")
		}
	}
	if e.Before.D() < time.Minute || e.Before.D() > 24*time.Hour {
		bad("eventlog.before", e.Before.D(), "1m up to 24h")
	}
}

// NotifyConfig is [notify]; a channel is on when its address is set.
type NotifyConfig struct {
	WebhookURL          string   `toml:"webhook_url"`           // incident changes are POSTed here as JSON ("" = off)
	WebhookSecretFile   string   `toml:"webhook_secret_file"`   // file holding a secret sent in webhook_secret_header
	WebhookSecretHeader string   `toml:"webhook_secret_header"` // the header that carries the webhook secret
	WebhookAttempts     int      `toml:"webhook_attempts"`      // tries per notification before it is given up
	WebhookBackoff      Duration `toml:"webhook_backoff"`       // wait before the first retry, doubled after each failed attempt
	SMTPHost            string   `toml:"smtp_host"`             // mail relay for notifications ("" = no mail)
	SMTPPort            int      `toml:"smtp_port"`             // the relay's port
	SMTPTLS             string   `toml:"smtp_tls"`              // starttls, tls, none
	SMTPUser            string   `toml:"smtp_user"`             // login at the relay ("" = none)
	SMTPPasswordFile    string   `toml:"smtp_password_file"`    // file holding smtp_user's password
	SMTPFrom            string   `toml:"smtp_from"`             // the From address of notification mail
	MailTo              []string `toml:"mail_to"`               // recipients of notification mail

	WebhookSecret scanwarden.Secret `toml:"-"`
	SMTPPassword  scanwarden.Secret `toml:"-"`
}

// DefaultSmbdDir is [receiver] smbd_dir by default: the folder the smbd
// unit's root step renders smb.conf into (scanwarden-smbd.service's
// StateDirectory=).
const DefaultSmbdDir = installed.SmbdDir

// ReceiverConfig is [receiver]: the fallback scan share (package receiver),
// off unless enabled. Its files live in data_dir/receiver.
type ReceiverConfig struct {
	Enabled      bool     `toml:"enabled"`       // run the fallback scan share (needs listen and password_file)
	Listen       string   `toml:"listen"`        // IP or IP:PORT (445 by default): the one address the share binds
	Share        string   `toml:"share"`         // the share's name as the MFPs address it
	Account      string   `toml:"account"`       // the MFPs' login name on the share
	PasswordFile string   `toml:"password_file"` // its password
	SMB1         bool     `toml:"smb1"`          // let SMB1/NTLMv1 firmware in (a standing warning)
	ExternalSMBD bool     `toml:"external_smbd"` // smbd runs under its own unit
	SmbdDir      string   `toml:"smbd_dir"`      // with external_smbd: root's own folder for smbd (smb.conf, passdb, logs)
	Allow        []string `toml:"allow"`         // networks that may connect to the share besides the registered MFPs
	Quiet        Duration `toml:"quiet"`         // a scan is complete after this long without a write
	Retry        Duration `toml:"retry"`         // first retry of a failed delivery (doubling)
	MaxRetry     Duration `toml:"max_retry"`     // longest wait between delivery retries
	Retention    Duration `toml:"retention"`     // how long a delivered scan's local copy is kept

	Password scanwarden.Secret `toml:"-"`
}

// WebConfig is [web]: HTTPS for the page, the API and /metrics (Config.WebTLS
// says when). Without cert_file/key_file the daemon makes its own
// self-signed certificate in the data dir (internal/webcert).
type WebConfig struct {
	// TLS left out: HTTPS unless listen is a loopback address (only this
	// box reaches it: a reverse proxy, tests) and no cert_file is given.
	// true: HTTPS on any address; false: plain HTTP on any address.
	TLS      *bool  `toml:"tls"`
	CertFile string `toml:"cert_file"` // the admin's own PEM certificate (chain)
	KeyFile  string `toml:"key_file"`  // and its PEM private key
	// Hosts are more names the page answers to besides the box's own (its
	// host name, its addresses, the listen address, localhost): the full
	// DNS name or an alias the admins type, a reverse proxy's name. A
	// request naming any other host is refused (DNS rebinding).
	Hosts []string `toml:"hosts"`
}

// WebTLS says whether the page is served over HTTPS (plain HTTP to the same
// port then only redirects there): [web] tls when set; else yes with
// [web] cert_file, or when listen is not a loopback address.
func (c Config) WebTLS() bool {
	if c.Web.TLS != nil {
		return *c.Web.TLS
	}
	if c.Web.CertFile != "" {
		return true
	}
	host, ip, _, ok := c.WebListen()
	if !ok {
		return true
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	return !ip.IsValid() || !ip.Unmap().IsLoopback()
}

// WebListen takes listen (HOST:PORT) apart, the one way the page's address
// is read: the host as written (a name, an address, "" for every address),
// the address when the host is one (else the zero Addr), and the port. ok
// is false when listen is not HOST:PORT (Validate refuses that).
func (c Config) WebListen() (host string, ip netip.Addr, port string, ok bool) {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return "", netip.Addr{}, "", false
	}
	ip, _ = netip.ParseAddr(host)
	return host, ip, port, true
}

// WarningsConfig is [warnings]: when a destination whose checks pass is
// said to be about to fail (a warning beside the verdict, never changing
// it); 0 turns that warning off.
type WarningsConfig struct {
	// PasswordDays: the scan account's password expires within this many
	// days (password-expires-soon).
	PasswordDays int `toml:"password_days"`
	// AccountDays: the scan account itself (accountExpires) expires within
	// this many days (account-expires-soon).
	AccountDays int `toml:"account_days"`
	// DiskPercent: the destination's volume has less than this percentage
	// free — said at once (disk-filling).
	DiskPercent int `toml:"disk_percent"`
	// DiskFloorBytes: the volume has fewer than this many bytes free — said
	// at once (disk-filling).
	DiskFloorBytes int64 `toml:"disk_floor_bytes"`
	// DiskDays: the free space the last checks measured, as a trend, runs
	// out within this many days (disk-filling, with the projected day).
	// The trend is the median slope of the samples (Theil–Sen: temporary
	// files coming and going do not move it) and is said only from at
	// least 5 checks over a span of at least 6 hours and half the time to
	// full it announces; the headline states the span.
	DiskDays int `toml:"disk_days"`
	// LockoutRise: this many bad passwords or more between two checks of a
	// destination that scanwarden did not send (lockout-pressure).
	LockoutRise int `toml:"lockout_rise"`
	// LockoutQuiet: lockout-pressure stays raised until no bad password
	// that scanwarden did not send has reached the DC for this long
	// (default "8h", a working day), through the good logons that reset
	// the DC's count meanwhile; raised once, cleared once. scanwarden's own
	// failed logons are never counted: each one is matched by its time.
	LockoutQuiet Duration `toml:"lockout_quiet"`
	// OldPasswordPeriod: how long the DC keeps accepting an account's
	// previous password over NTLM after a change (default "60m", as
	// Windows' and Samba's "old password allowed period"). A check that
	// logs on with a password last known current before the account's
	// pwdLastSet raises previous-password, naming when the DC stops
	// accepting it; "0s" turns that warning off.
	OldPasswordPeriod Duration `toml:"old_password_period"`
}

// Thresholds is the section as package warning takes it.
func (w WarningsConfig) Thresholds() warning.Thresholds {
	return warning.Thresholds{PasswordDays: w.PasswordDays, AccountDays: w.AccountDays, DiskPercent: w.DiskPercent,
		DiskFloorBytes: w.DiskFloorBytes, DiskDays: w.DiskDays, LockoutRise: w.LockoutRise, LockoutQuiet: w.LockoutQuiet.D(),
		OldPasswordPeriod: w.OldPasswordPeriod.D()}
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
		Checks: ChecksConfig{Interval: Duration(15 * time.Minute), Jitter: Duration(90 * time.Second), MaxConcurrent: 4,
			MaxFailures: smbcheck.DefaultMaxFailures, FailureWindow: Duration(smbcheck.DefaultWindow), Timeout: Duration(smbcheck.DefaultTimeout),
			EventGap: Duration(time.Minute)},
		Incidents: IncidentsConfig{CloseAfter: Duration(3 * time.Hour)},
		SNMP:      SNMPConfig{Interval: Duration(watch.Poller.Interval)},
		AD:        ADConfig{Margin: ad.DefaultMargin, Timeout: Duration(ad.DefaultTimeout)},
		Eventlog:  EventlogConfig{Before: Duration(10 * time.Minute)},
		Notify: NotifyConfig{WebhookSecretHeader: "X-Scanwarden-Secret", WebhookAttempts: 5, WebhookBackoff: Duration(2 * time.Second),
			SMTPPort: 587, SMTPTLS: "starttls"},
		Warnings: defaultWarnings(),
		Receiver: ReceiverConfig{Share: samba.DefaultShare, Account: samba.DefaultAccount, SmbdDir: DefaultSmbdDir,
			Quiet: Duration(receiver.DefaultWatch.Quiet), Retry: Duration(receiver.DefaultForward.Retry),
			MaxRetry: Duration(receiver.DefaultForward.MaxRetry), Retention: Duration(receiver.DefaultForward.Retention)},
	}
}

func defaultWarnings() WarningsConfig {
	t := warning.DefaultThresholds()
	return WarningsConfig{PasswordDays: t.PasswordDays, AccountDays: t.AccountDays, DiskPercent: t.DiskPercent,
		DiskFloorBytes: t.DiskFloorBytes, DiskDays: t.DiskDays, LockoutRise: t.LockoutRise, LockoutQuiet: Duration(t.LockoutQuiet),
		OldPasswordPeriod: Duration(t.OldPasswordPeriod)}
}

// ConfigError is a bad key or value: the one field error
// (scanwarden.FieldError: Field the key, dotted as "checks.interval"; Value
// as written; the reason) with the file and the key's line (0 when not from
// a file). The CLI, the web page and the log each word it.
type ConfigError struct {
	File string
	Line int
	scanwarden.FieldError
}

// configError is the *ConfigError for key in file at line.
func configError(file string, line int, key, value, reason string) *ConfigError {
	return &ConfigError{File: file, Line: line, FieldError: scanwarden.FieldError{Field: key, Value: value, Reason: reason}}
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config")
	if e.File != "" {
		b.WriteString(" " + e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	if v, _ := e.Value.(string); v != "" {
		b.WriteString(" = " + v)
	}
	b.WriteString(": " + e.Reason)
	return b.String()
}

// ConfigErrors is every problem found in one file.
type ConfigErrors []*ConfigError

func (es ConfigErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// LoadConfig reads file (none: the defaults) and the secret files it names.
func LoadConfig(file string) (Config, error) {
	if file == "" {
		c := Defaults()
		return c, c.finish("", nil)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := ParseConfig(file, b)
	if err != nil {
		return Config{}, err
	}
	return c, c.finish(file, b)
}

// ParseConfig decodes TOML over the defaults and validates the values
// (not the secret files). Errors are ConfigErrors naming key and line.
func ParseConfig(file string, b []byte) (Config, error) {
	c := Defaults()
	c.File = file
	lines := keyLines(b)
	if es := bareDurations(file, b, lines); len(es) > 0 {
		return Config{}, es
	}
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var sm *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &sm):
			var es ConfigErrors
			for _, e := range sm.Errors {
				row, _ := e.Position()
				es = append(es, configError(file, row, strings.Join(e.Key(), "."), "", "unknown key"))
			}
			return Config{}, es
		case errors.As(err, &de):
			row, _ := de.Position()
			reason := de.Error()
			reason = strings.TrimPrefix(reason, "toml: ")
			if strings.HasPrefix(reason, "cannot decode TOML ") {
				reason = "wrong type: " + typeHint(reason)
			}
			return Config{}, ConfigErrors{configError(file, row, strings.Join(de.Key(), "."), "", reason)}
		default:
			return Config{}, ConfigErrors{configError(file, 0, "", "", err.Error())}
		}
	}
	for k := range lines {
		c.FileKeys = append(c.FileKeys, k)
	}
	sort.Strings(c.FileKeys)
	if _, set := lines["checks.jitter"]; !set && c.Checks.Jitter > c.Checks.Interval/10 {
		// The default jitter follows a shorter interval than the default's.
		c.Checks.Jitter = c.Checks.Interval / 10
	}
	if es := c.validate(); len(es) > 0 {
		for _, e := range es {
			e.File, e.Line = file, lines[e.Field]
		}
		return Config{}, es
	}
	return c, nil
}

// bareDurations finds durations written as a bare number (interval = 15):
// the decoder takes an integer as nanoseconds, and the validation then said
// "at least 10s" of what the admin meant as 15 minutes or seconds.
func bareDurations(file string, b []byte, lines map[string]int) ConfigErrors {
	var raw map[string]any
	if toml.Unmarshal(b, &raw) != nil {
		return nil // the decoder says what is wrong, with its line
	}
	var es ConfigErrors
	var walk func(prefix string, t reflect.Type, m map[string]any)
	walk = func(prefix string, t reflect.Type, m map[string]any) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			v, ok := m[tag]
			if tag == "" || tag == "-" || !ok {
				continue
			}
			key := prefix + tag
			switch {
			case f.Type == reflect.TypeOf(Duration(0)):
				switch n := v.(type) {
				case int64, float64:
					es = append(es, configError(file, lines[key], key, fmt.Sprint(n),
						fmt.Sprintf("a duration needs its unit: write \"%vs\" or \"%vm\" (quoted)", n, n)))
				}
			case f.Type.Kind() == reflect.Struct:
				if sub, ok := v.(map[string]any); ok {
					walk(key+".", f.Type, sub)
				}
			}
		}
	}
	walk("", reflect.TypeOf(Config{}), raw)
	return es
}

// typeHint turns go-toml's "cannot decode TOML string into struct field
// X.Y of type int" into "want a number, not a string".
func typeHint(msg string) string {
	from := ""
	if f := strings.Fields(strings.TrimPrefix(msg, "cannot decode TOML ")); len(f) > 0 {
		from = f[0]
	}
	want := ""
	if i := strings.LastIndex(msg, " of type "); i >= 0 {
		want = msg[i+len(" of type "):]
	}
	switch {
	case strings.HasPrefix(want, "int"):
		want = "a whole number"
	case want == "bool":
		want = "true or false"
	case want == "string" || strings.HasSuffix(want, "Duration"):
		want = "a quoted string"
	case strings.HasPrefix(want, "[]"):
		want = "a list such as [\"a\", \"b\"]"
	}
	if from == "" || want == "" {
		return msg
	}
	return "want " + want + ", not a " + from
}

// keyLines maps each dotted key a TOML file sets to its line. It reads
// only well-formed files (the decoder has accepted this one): table
// headers and key = value lines; continuation lines of arrays are skipped.
func keyLines(b []byte) map[string]int {
	out := map[string]int{}
	table := ""
	depth := 0 // open [ of a multi-line array
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if depth > 0 {
			depth += strings.Count(line, "[") - strings.Count(line, "]")
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			name, _, _ := strings.Cut(strings.Trim(line, "[]"), "]")
			table = strings.TrimSpace(strings.Trim(name, "[]"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `"'`)
		if table != "" {
			k = table + "." + k
		}
		out[k] = n
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "[") {
			depth = strings.Count(v, "[") - strings.Count(v, "]")
		}
	}
	return out
}

// badValue records a bad value of key with the reason.
type badValue func(key string, value any, reason string)

// validate checks every section; each error names its key.
func (c *Config) validate() ConfigErrors {
	var es ConfigErrors
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

// validate checks [web].
func (w WebConfig) validate(bad badValue) {
	if (w.CertFile == "") != (w.KeyFile == "") {
		if w.CertFile == "" {
			bad("web.cert_file", `""`, "needed with web.key_file")
		} else {
			bad("web.key_file", `""`, "needed with web.cert_file")
		}
	}
	for _, h := range w.Hosts {
		if !validWebHost(h) {
			bad("web.hosts", strconv.Quote(h), "a host name or an address, without a port")
		}
	}
	if w.TLS != nil && !*w.TLS && w.CertFile != "" {
		bad("web.cert_file", strconv.Quote(w.CertFile), "given with web.tls = false (leave it out, or set tls = true)")
	}
}

// validWebHost says whether h is a host name (letters, digits, hyphens,
// dots) or an IP address.
func validWebHost(h string) bool {
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// validate checks [checks].
func (ck ChecksConfig) validate(bad badValue) {
	if ck.Interval.D() < 10*time.Second {
		bad("checks.interval", ck.Interval.D(), "at least 10s")
	}
	if ck.Jitter.D() < 0 || ck.Jitter.D() > ck.Interval.D() {
		bad("checks.jitter", ck.Jitter.D(), "0 up to checks.interval")
	}
	if ck.MaxConcurrent < 1 || ck.MaxConcurrent > 64 {
		bad("checks.max_concurrent", ck.MaxConcurrent, "1..64")
	}
	if ck.MaxFailures < 0 || ck.MaxFailures > 10 {
		bad("checks.max_failures", ck.MaxFailures, "0 (replay nothing that can fail) .. 10")
	}
	if ck.FailureWindow.D() < time.Second {
		bad("checks.failure_window", ck.FailureWindow.D(), "at least 1s (the domain's lockout observation window)")
	}
	if ck.Timeout.D() < time.Second || ck.Timeout.D() > 2*time.Minute {
		bad("checks.timeout", ck.Timeout.D(), "1s..2m")
	}
	if ck.EventGap.D() < 0 {
		bad("checks.event_gap", ck.EventGap.D(), "0 or more")
	}
}

// validate checks [warnings].
func (wc WarningsConfig) validate(bad badValue) {
	for _, d := range []struct {
		key string
		v   int
	}{{"warnings.password_days", wc.PasswordDays}, {"warnings.account_days", wc.AccountDays}, {"warnings.disk_days", wc.DiskDays}} {
		if d.v < 0 || d.v > 366 {
			bad(d.key, d.v, "0 (off) .. 366 days")
		}
	}
	if wc.DiskPercent < 0 || wc.DiskPercent > 99 {
		bad("warnings.disk_percent", wc.DiskPercent, "0 (off) .. 99")
	}
	if wc.DiskFloorBytes < 0 {
		bad("warnings.disk_floor_bytes", wc.DiskFloorBytes, "0 (off) or more")
	}
	if wc.LockoutRise < 0 || wc.LockoutRise > 100 {
		bad("warnings.lockout_rise", wc.LockoutRise, "0 (off) .. 100")
	}
	if q := wc.LockoutQuiet.D(); q < 0 || q > 7*24*time.Hour {
		bad("warnings.lockout_quiet", q, "0s .. 168h (the own failed logons it is judged against are kept 8 days)")
	}
	if p := wc.OldPasswordPeriod.D(); p < 0 || p > 24*time.Hour {
		bad("warnings.old_password_period", p, "0s (off) .. 24h")
	}
}

// validate checks [incidents].
func (i IncidentsConfig) validate(bad badValue) {
	if i.CloseAfter.D() < 0 {
		bad("incidents.close_after", i.CloseAfter.D(), "0 or more")
	}
}

// validate checks [snmp].
func (s SNMPConfig) validate(bad badValue) {
	if s.Interval.D() < time.Second {
		bad("snmp.interval", s.Interval.D(), "at least 1s")
	}
	for _, l := range []struct{ key, v string }{{"snmp.trap_listen", s.TrapListen}, {"snmp.smtp_listen", s.SMTPListen}} {
		if l.v == "" {
			continue
		}
		if err := checkListen(l.v, true); err != nil {
			bad(l.key, strconv.Quote(l.v), err.Error())
		}
	}
	if s.TrapCommunityFile != "" && s.TrapListen == "" {
		bad("snmp.trap_community_file", strconv.Quote(s.TrapCommunityFile), "needs snmp.trap_listen")
	}
	if s.TrapListen != "" && s.TrapCommunityFile == "" && s.TrapCommunity.IsZero() && s.TrapV3User == "" {
		bad("snmp.trap_listen", strconv.Quote(s.TrapListen), "needs snmp.trap_community_file or snmp.trap_v3_user (traps with any community are not taken)")
	}
	s.validateTrapV3(bad)
	for _, a := range s.Allow {
		if _, err := samba.ParseAllowEntry(a); err != nil {
			bad("snmp.allow", strconv.Quote(a), "not a network such as 192.168.10.0/24, or an address")
		}
	}
	if len(s.Allow) > 0 && s.TrapListen == "" && s.SMTPListen == "" {
		bad("snmp.allow", fmt.Sprint(s.Allow), "needs snmp.trap_listen or snmp.smtp_listen")
	}
	for _, cidr := range s.CIDR {
		p, err := samba.ParseAllowEntry(cidr)
		if err != nil {
			bad("snmp.cidr", strconv.Quote(cidr), "not a network such as 192.168.10.0/24, or an address")
		} else if _, err := snmp.ExpandPrefix(p, snmp.DefaultSweepMax); err != nil {
			bad("snmp.cidr", strconv.Quote(cidr), "at most 1,024 addresses")
		}
	}
}

// Networks are [snmp] cidr, AllowNets [snmp] allow, read with
// samba.ParseAllowEntry as the validation reads them (the one parser of
// an address or a network). An entry that does not parse is an error
// naming it, never left out.
func (s SNMPConfig) Networks() ([]netip.Prefix, error) { return parseNets("snmp.cidr", s.CIDR) }

// AllowNets: see Networks.
func (s SNMPConfig) AllowNets() ([]netip.Prefix, error) { return parseNets("snmp.allow", s.Allow) }

func parseNets(key string, entries []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range entries {
		p, err := samba.ParseAllowEntry(e)
		if err != nil {
			return nil, configError("", 0, key, strconv.Quote(e), err.Error())
		}
		out = append(out, p)
	}
	return out, nil
}

// validateTrapV3 checks the snmp.trap_v3_* keys.
func (s SNMPConfig) validateTrapV3(bad badValue) {
	if s.TrapV3User != "" && s.TrapListen == "" {
		bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), "needs snmp.trap_listen")
	}
	for _, k := range []struct{ key, v string }{{"snmp.trap_v3_auth_file", s.TrapV3AuthFile}, {"snmp.trap_v3_priv_file", s.TrapV3PrivFile},
		{"snmp.trap_v3_auth_proto", s.TrapV3AuthProto}, {"snmp.trap_v3_priv_proto", s.TrapV3PrivProto}} {
		if k.v != "" && s.TrapV3User == "" {
			bad(k.key, strconv.Quote(k.v), "needs snmp.trap_v3_user")
		}
	}
	if s.TrapV3User != "" && s.TrapV3AuthFile == "" && s.TrapV3Auth.IsZero() {
		bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), "needs snmp.trap_v3_auth_file (noAuth traps are not taken)")
	} else if u := s.TrapV3(); u != nil && !u.AuthPass.IsZero() {
		if err := u.Validate(); err != nil {
			bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), err.Error())
		}
	} else if u != nil {
		// Passphrases not read yet (Validate before finish): check what can be.
		probe := *u
		probe.AuthPass = scanwarden.NewSecret("12345678")
		if !u.PrivPass.IsZero() || s.TrapV3PrivFile != "" {
			probe.PrivPass = probe.AuthPass
		}
		if err := probe.Validate(); err != nil {
			bad("snmp.trap_v3_user", strconv.Quote(s.TrapV3User), err.Error())
		}
	}
}

// validate checks [ad].
func (a ADConfig) validate(bad badValue) {
	if a.URL != "" {
		u, err := url.Parse(a.URL)
		if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
			bad("ad.url", strconv.Quote(a.URL), "want ldaps://HOST or ldap://HOST")
		}
		if a.BindUser == "" {
			bad("ad.bind_user", `""`, "needed with ad.url")
		}
		if a.PasswordFile == "" && a.Password.IsZero() {
			bad("ad.password_file", `""`, "needed with ad.url")
		}
	}
	if a.Margin < 1 || a.Margin > 5 {
		bad("ad.margin", a.Margin, "1..5 (failed logons kept in reserve below the lockout threshold)")
	}
	if a.Timeout.D() < time.Second {
		bad("ad.timeout", a.Timeout.D(), "at least 1s")
	}
}

// validate checks [notify].
func (n NotifyConfig) validate(bad badValue) {
	if n.WebhookURL != "" {
		u, err := url.Parse(n.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("notify.webhook_url", "(hidden)", "want http(s)://HOST/PATH")
		}
	}
	if n.WebhookAttempts < 1 || n.WebhookAttempts > 20 {
		bad("notify.webhook_attempts", n.WebhookAttempts, "1..20")
	}
	if n.WebhookBackoff.D() < 0 {
		bad("notify.webhook_backoff", n.WebhookBackoff.D(), "0 or more")
	}
	if n.WebhookSecretHeader == "" || strings.ContainsAny(n.WebhookSecretHeader, " :\r\n") {
		bad("notify.webhook_secret_header", strconv.Quote(n.WebhookSecretHeader), "an HTTP header name")
	}
	if n.SMTPPort < 1 || n.SMTPPort > 65535 {
		bad("notify.smtp_port", n.SMTPPort, "1..65535")
	}
	switch n.SMTPTLS {
	case "starttls", "tls", "none":
	default:
		bad("notify.smtp_tls", strconv.Quote(n.SMTPTLS), "starttls, tls or none")
	}
	if n.SMTPHost != "" {
		if n.SMTPFrom == "" {
			bad("notify.smtp_from", `""`, "needed with notify.smtp_host")
		}
		if len(n.MailTo) == 0 {
			bad("notify.mail_to", "[]", "needed with notify.smtp_host")
		}
	}
	for _, to := range n.MailTo {
		if !strings.Contains(to, "@") {
			bad("notify.mail_to", strconv.Quote(to), "not an e-mail address")
		}
	}
	if n.SMTPUser != "" && n.SMTPPasswordFile == "" && n.SMTPPassword.IsZero() {
		bad("notify.smtp_password_file", `""`, "needed with notify.smtp_user")
	}
}

// validate checks [receiver].
func (r ReceiverConfig) validate(bad badValue) {
	if r.Enabled {
		if _, _, err := samba.ParseListen(r.Listen); err != nil {
			bad("receiver.listen", strconv.Quote(r.Listen), err.Error())
		}
		if r.PasswordFile == "" {
			bad("receiver.password_file", `""`, "needed with receiver.enabled")
		}
	}
	for _, a := range r.Allow {
		if _, err := samba.ParseAllowEntry(a); err != nil {
			bad("receiver.allow", strconv.Quote(a), "not an address or a network such as 192.168.10.0/24")
		}
	}
	if r.ExternalSMBD && !filepath.IsAbs(r.SmbdDir) {
		bad("receiver.smbd_dir", strconv.Quote(r.SmbdDir), "an absolute path (root's own folder for smbd)")
	}
	if r.Share == "" || strings.ContainsAny(r.Share, `\/:*?"<>|[]`) {
		bad("receiver.share", strconv.Quote(r.Share), "a share name")
	}
	if r.Account == "" || strings.ContainsAny(r.Account, `\/:*?"<>|[]@ `) {
		bad("receiver.account", strconv.Quote(r.Account), "a plain account name")
	}
	if r.Quiet.D() <= 0 {
		bad("receiver.quiet", r.Quiet.D(), "must be positive")
	}
	if r.Retry.D() <= 0 || r.MaxRetry.D() < r.Retry.D() {
		bad("receiver.retry", r.Retry.D(), "positive, and at most receiver.max_retry")
	}
	if r.Retention.D() < 0 {
		bad("receiver.retention", r.Retention.D(), "0 or more")
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

// finish reads the secret files the config names. Errors name the key and
// its line in src, the text of the config file (none: nil).
func (c *Config) finish(file string, src []byte) error {
	var es ConfigErrors
	lines := keyLines(src)
	read := func(key, path string, dst *scanwarden.Secret) {
		if path == "" {
			return
		}
		s, err := readSecretFile(path)
		if err != nil {
			es = append(es, configError(file, lines[key], key, strconv.Quote(path), err.Error()))
			return
		}
		*dst = s
	}
	c.SNMP.Community = scanwarden.NewSecret("public")
	read("snmp.community_file", c.SNMP.CommunityFile, &c.SNMP.Community)
	read("snmp.trap_community_file", c.SNMP.TrapCommunityFile, &c.SNMP.TrapCommunity)
	read("snmp.trap_v3_auth_file", c.SNMP.TrapV3AuthFile, &c.SNMP.TrapV3Auth)
	read("snmp.trap_v3_priv_file", c.SNMP.TrapV3PrivFile, &c.SNMP.TrapV3Priv)
	if u := c.SNMP.TrapV3(); u != nil && !u.AuthPass.IsZero() {
		if err := u.Validate(); err != nil {
			es = append(es, configError(file, lines["snmp.trap_v3_user"], "snmp.trap_v3_user", strconv.Quote(u.User), err.Error()))
		}
	}
	read("ad.password_file", c.AD.PasswordFile, &c.AD.Password)
	read("notify.webhook_secret_file", c.Notify.WebhookSecretFile, &c.Notify.WebhookSecret)
	read("notify.smtp_password_file", c.Notify.SMTPPasswordFile, &c.Notify.SMTPPassword)
	read("receiver.password_file", c.Receiver.PasswordFile, &c.Receiver.Password)
	read("eventlog.password_file", c.Eventlog.PasswordFile, &c.Eventlog.Password)
	for _, e := range c.Eventlog.Servers {
		host, user, path, ok := serverEntry(e)
		if !ok {
			continue // validate names it
		}
		var pw scanwarden.Secret
		read("eventlog.servers", path, &pw)
		if c.Eventlog.ServerAccounts == nil {
			c.Eventlog.ServerAccounts = map[string]EventlogAccount{}
		}
		c.Eventlog.ServerAccounts[host] = EventlogAccount{User: user, Password: pw}
	}
	if len(es) > 0 {
		return es
	}
	return nil
}

// readSecretFile reads a one-line secret (scanwarden.ReadSecretFile); the
// error names neither the content nor the path (the key's value shows it).
func readSecretFile(path string) (scanwarden.Secret, error) {
	s, err := scanwarden.ReadSecretFile(path)
	var pe *os.PathError
	if errors.As(err, &pe) {
		return s, pe.Err
	}
	return s, err
}
