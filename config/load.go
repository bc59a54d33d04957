package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/scanwarden/scanwarden"
)

// Load reads file (none: the defaults) and the secret files it names.
func Load(file string) (Config, error) {
	if file == "" {
		c := Defaults()
		return c, c.finish("", nil)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(file, b)
	if err != nil {
		return Config{}, err
	}
	return c, c.finish(file, b)
}

// Parse decodes TOML over the defaults and validates the values
// (not the secret files). Errors are Errors naming key and line.
func Parse(file string, b []byte) (Config, error) {
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
			var es Errors
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
			return Config{}, Errors{configError(file, row, strings.Join(de.Key(), "."), "", reason)}
		default:
			return Config{}, Errors{configError(file, 0, "", "", err.Error())}
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
	if es := c.Validate(); len(es) > 0 {
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
func bareDurations(file string, b []byte, lines map[string]int) Errors {
	var raw map[string]any
	if toml.Unmarshal(b, &raw) != nil {
		return nil // the decoder says what is wrong, with its line
	}
	var es Errors
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

// finish reads the secret files the config names. Errors name the key and
// its line in src, the text of the config file (none: nil).
func (c *Config) finish(file string, src []byte) error {
	var es Errors
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
