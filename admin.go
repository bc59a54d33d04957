package scanwarden

import "time"

// The admin's sessions, the API tokens and the audit log are shared by the
// store (which keeps them) and the web server (which checks them). Only
// hashes are kept: a session id or a token is shown once and never stored.

// Session is one logged-in browser. IDHash is the SHA-256 of the cookie value.
type Session struct {
	IDHash   string
	Created  time.Time
	Expires  time.Time // absolute end, whatever the activity
	LastSeen time.Time // the idle timeout counts from here
	Client   string    // the address it logged in from
}

// APIToken is a bearer token for the API and /metrics. Hash is the SHA-256 of
// the token; the token itself is printed once when it is made.
type APIToken struct {
	Name     string
	Hash     string
	Created  time.Time
	LastUsed time.Time // zero until first used
}

// AuditEntry is one admin action: who (admin or token:NAME), from where, what
// and on what. Detail never holds a secret.
type AuditEntry struct {
	ID     int64
	At     time.Time
	Actor  string
	Client string
	Action string
	Target string
	Detail string
}
