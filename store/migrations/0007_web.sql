-- The web admin (package web): one admin account, its browser sessions, the
-- API tokens, the audit log of admin actions, and the settings changed in
-- the page. Session ids and tokens are kept only as SHA-256 hashes; the
-- password only as an argon2id PHC string.
CREATE TABLE web_admin (
	id            INTEGER PRIMARY KEY CHECK (id = 1),
	password_hash TEXT NOT NULL,
	updated_at    TEXT NOT NULL
);

CREATE TABLE web_sessions (
	id_hash   TEXT PRIMARY KEY,
	created   TEXT NOT NULL,
	expires   TEXT NOT NULL,
	last_seen TEXT NOT NULL,
	client    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX web_sessions_expires ON web_sessions(expires);

CREATE TABLE api_tokens (
	name      TEXT PRIMARY KEY,
	hash      TEXT NOT NULL UNIQUE,
	created   TEXT NOT NULL,
	last_used TEXT NOT NULL DEFAULT ''
);

CREATE TABLE audit_log (
	id     INTEGER PRIMARY KEY,
	at     TEXT NOT NULL,
	actor  TEXT NOT NULL,
	client TEXT NOT NULL DEFAULT '',
	action TEXT NOT NULL,
	target TEXT NOT NULL DEFAULT '',
	detail TEXT NOT NULL DEFAULT ''
);

-- Settings stored from the web page, one row per section.key. A secret's
-- value is stored sealed by the caller (the registry's key), never in clear.
CREATE TABLE stored_settings (
	section    TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	secret     INTEGER NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL,
	PRIMARY KEY (section, key)
);

-- The web's list of every device's newest send failures (snmp_events has
-- (device, first_seen) for one device's).
CREATE INDEX snmp_events_first_seen ON snmp_events(first_seen);
