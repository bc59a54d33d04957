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
	Scope    TokenScope
	Created  time.Time
	LastUsed time.Time // zero until first used
}

// TokenScope is what a token may do. Each scope includes the ones before it.
type TokenScope string

// The scopes: metrics reads only /metrics; read also the GET API; admin also
// runs checks, imports and changes settings.
const (
	ScopeMetrics TokenScope = "metrics"
	ScopeRead    TokenScope = "read"
	ScopeAdmin   TokenScope = "admin"
)

// ParseTokenScope reads a scope's name; ok false for anything else.
func ParseTokenScope(s string) (TokenScope, bool) {
	switch sc := TokenScope(s); sc {
	case ScopeMetrics, ScopeRead, ScopeAdmin:
		return sc, true
	}
	return "", false
}

// Allows reports whether a token of scope t may do what needs scope need.
func (t TokenScope) Allows(need TokenScope) bool { return t.rank() >= need.rank() && need.rank() > 0 }

func (t TokenScope) rank() int {
	switch t {
	case ScopeMetrics:
		return 1
	case ScopeRead:
		return 2
	case ScopeAdmin:
		return 3
	}
	return 0
}

// AnonymousActor is the actor of an attempt made without a session or a
// token (a failed login). The store counts those per address and hour
// instead of keeping each, apart from the admin's actions.
const AnonymousActor = "anonymous"

// AuditEntry is one admin action: who (admin or token:NAME), from where, what
// and on what. Detail never holds a secret. An anonymous row read back
// stands for Count attempts from Client in one hour (At the latest); an
// authenticated one has Count 1.
type AuditEntry struct {
	ID     int64
	At     time.Time
	Actor  string
	Client string
	Action string
	Target string
	Detail string
	Count  int
	// First is an anonymous row's first attempt (At its latest); zero
	// for an admin's action.
	First time.Time
}
