-- The registry (package registry): devices (the MFPs), their scan
-- destinations, and each destination's check reports. Secret columns
-- (*_sealed) hold AES-256-GCM ciphertext made by package seal under the key
-- file; settings.seal_key_id names that key. Never a secret in clear.
CREATE TABLE devices (
	id                 INTEGER PRIMARY KEY,
	name               TEXT NOT NULL COLLATE NOCASE UNIQUE,
	address            TEXT NOT NULL DEFAULT '',
	snmp_version       TEXT NOT NULL DEFAULT '',
	snmp_community     BLOB,
	snmp_v3_user       TEXT NOT NULL DEFAULT '',
	snmp_v3_auth_proto TEXT NOT NULL DEFAULT '',
	snmp_v3_auth       BLOB,
	snmp_v3_priv_proto TEXT NOT NULL DEFAULT '',
	snmp_v3_priv       BLOB,
	serial             TEXT NOT NULL DEFAULT '',
	model              TEXT NOT NULL DEFAULT '',
	sys_name           TEXT NOT NULL DEFAULT '',
	workstation        TEXT NOT NULL DEFAULT '',
	created_at         TEXT NOT NULL,
	updated_at         TEXT NOT NULL
);

CREATE TABLE destinations (
	id              INTEGER PRIMARY KEY,
	name            TEXT NOT NULL COLLATE NOCASE UNIQUE,
	host            TEXT NOT NULL,
	port            INTEGER NOT NULL DEFAULT 0,
	share           TEXT NOT NULL,
	path            TEXT NOT NULL DEFAULT '',
	user_name       TEXT NOT NULL DEFAULT '',
	password_sealed BLOB NOT NULL,
	device_id       INTEGER REFERENCES devices(id),
	workstation     TEXT NOT NULL DEFAULT '',
	address_book_id TEXT NOT NULL DEFAULT '',
	display_name    TEXT NOT NULL DEFAULT '',
	source          TEXT NOT NULL,
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
);
CREATE INDEX destinations_device ON destinations(device_id);
CREATE UNIQUE INDEX destinations_book ON destinations(device_id, address_book_id)
	WHERE device_id IS NOT NULL AND address_book_id != '';

-- Each check of a destination, newest kept (bounded per destination).
CREATE TABLE destination_reports (
	id             INTEGER PRIMARY KEY,
	destination_id INTEGER NOT NULL REFERENCES destinations(id) ON DELETE CASCADE,
	at             TEXT NOT NULL,
	cause          TEXT NOT NULL,
	kyocera_code   TEXT NOT NULL DEFAULT '',
	summary        TEXT NOT NULL DEFAULT '',
	report         TEXT NOT NULL
);
CREATE INDEX destination_reports_dest ON destination_reports(destination_id, at);
