-- SNMP inventory (package snmp): one row per device address (host:port).
-- Every text column holds device-provided data as received (cleaned of
-- control bytes): render it escaped, never use it as a path or filter.
CREATE TABLE snmp_devices (
	address       TEXT PRIMARY KEY,
	kyocera       INTEGER NOT NULL DEFAULT 0,
	sys_object_id TEXT NOT NULL DEFAULT '',
	sys_descr     TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	serial        TEXT NOT NULL DEFAULT '',
	firmware      TEXT NOT NULL DEFAULT '',
	sys_name      TEXT NOT NULL DEFAULT '',
	sys_location  TEXT NOT NULL DEFAULT '',
	mac           TEXT NOT NULL DEFAULT '',
	first_seen    TEXT NOT NULL,
	last_seen     TEXT NOT NULL
);
CREATE INDEX snmp_devices_serial ON snmp_devices(serial);

-- Send-failure events (and raw traps). One row per occurrence; a sighting
-- of the same dedup_key within the de-duplication window updates
-- last_seen and count instead of adding a row.
CREATE TABLE snmp_events (
	id          INTEGER PRIMARY KEY,
	device      TEXT NOT NULL,
	dedup_key   TEXT NOT NULL,
	source      TEXT NOT NULL,
	code        TEXT NOT NULL DEFAULT '',
	text        TEXT NOT NULL DEFAULT '',
	destination TEXT NOT NULL DEFAULT '',
	rule        TEXT NOT NULL DEFAULT '',
	detail      TEXT NOT NULL DEFAULT '{}',
	first_seen  TEXT NOT NULL,
	last_seen   TEXT NOT NULL,
	count       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX snmp_events_key ON snmp_events(dedup_key, last_seen);
CREATE INDEX snmp_events_device ON snmp_events(device, first_seen);
