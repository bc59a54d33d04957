package config

import (
	"strconv"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
)

// Eventlog is [eventlog]: the read-only account that, after each
// check, counts the destination share's connections (the session-limit
// pattern) and, after a failed one, reads the file server's own event logs
// around it (Security 4625/4776/4740 for the scan account or the MFP,
// System 2017/2019/2020 and starts) over \pipe\eventlog. Off while user is
// empty. Never the scan account: its logons would count against that
// account's failed-logon budget (a check refuses it and says so).
type Eventlog struct {
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
func (e Eventlog) validate(bad badValue) {
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
