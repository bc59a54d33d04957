package config

import "strings"

// label is a setting's label, for messages.
func label(section, key string) string {
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
func (t secretTie) endpoint(c Config) string {
	var vs []string
	for _, k := range t.fields {
		v, _ := configField(&c, t.section, k)
		vs = append(vs, formatValue(v))
	}
	return strings.Join(vs, "\n")
}

// pin is the row binding t's secret to its endpoint in c.
func (t secretTie) pin(c Config) Saved {
	return Saved{Section: t.section, Key: t.pinKey(), Value: t.endpoint(c)}
}

// savedPin finds t's pin row among saved.
func (t secretTie) savedPin(saved []Saved) (string, bool) {
	for _, s := range saved {
		if s.Section == t.section && s.Key == t.pinKey() {
			return s.Value, true
		}
	}
	return "", false
}

// moved reports whether the endpoint differs between two configs.
func (t secretTie) moved(a, b Config) bool {
	for _, k := range t.fields {
		va, _ := configField(&a, t.section, k)
		vb, _ := configField(&b, t.section, k)
		if formatValue(va) != formatValue(vb) {
			return true
		}
	}
	return false
}
