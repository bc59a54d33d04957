-- Hardening (issue 8).
-- An event from a sender that is not verified as the device it names (a
-- mail relayed from an allowed network quoting no known device, a trap from
-- an allowed network that is no watched device) is kept, marked, and never
-- shown as that device's failure.
ALTER TABLE snmp_events ADD COLUMN unverified INTEGER NOT NULL DEFAULT 0;
CREATE INDEX snmp_events_last_seen ON snmp_events(last_seen);

-- Events the table's bounds removed (age, rows, bytes), counted so that a
-- flood that pushed real events out can be seen.
CREATE TABLE snmp_event_drops (
	reason  TEXT PRIMARY KEY,
	count   INTEGER NOT NULL DEFAULT 0,
	last_at TEXT NOT NULL DEFAULT ''
);

-- Ledger rows end with their observation window: expires = at + window.
ALTER TABLE logon_attempts ADD COLUMN expires TEXT NOT NULL DEFAULT '';
