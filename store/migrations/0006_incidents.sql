-- Incidents (package incident, kept here; the monitor feeds them): one row
-- per spell of trouble with one destination, at most one open at a time.
-- destination is the registry's destination name (text, not a foreign key:
-- an incident's history outlives a removed destination). Times are RFC 3339;
-- '' is "not set".
CREATE TABLE incidents (
	id            INTEGER PRIMARY KEY,
	destination   TEXT NOT NULL COLLATE NOCASE,
	device        TEXT NOT NULL DEFAULT '',
	state         TEXT NOT NULL CHECK (state IN ('open', 'closed')),
	cause         TEXT NOT NULL DEFAULT '',
	kyocera_code  TEXT NOT NULL DEFAULT '',
	summary       TEXT NOT NULL DEFAULT '',
	fix           TEXT NOT NULL DEFAULT '',
	opened_at     TEXT NOT NULL,
	closed_at     TEXT NOT NULL DEFAULT '',
	last_failure  TEXT NOT NULL DEFAULT '',
	green_since   TEXT NOT NULL DEFAULT '',
	flaps         INTEGER NOT NULL DEFAULT 0,
	affected_jobs INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX incidents_one_open ON incidents(destination) WHERE state = 'open';
CREATE INDEX incidents_destination ON incidents(destination, id);

-- Each incident's timeline: device failures, checks, cause changes,
-- deliveries, notifications sent. text holds device-provided words as data.
CREATE TABLE incident_timeline (
	id           INTEGER PRIMARY KEY,
	incident_id  INTEGER NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	at           TEXT NOT NULL,
	kind         TEXT NOT NULL,
	cause        TEXT NOT NULL DEFAULT '',
	kyocera_code TEXT NOT NULL DEFAULT '',
	text         TEXT NOT NULL DEFAULT '',
	report_id    INTEGER NOT NULL DEFAULT 0,
	event_id     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX incident_timeline_incident ON incident_timeline(incident_id, id);

-- Every notification sent or tried (incident_id NULL for a test send).
CREATE TABLE notifications (
	id          INTEGER PRIMARY KEY,
	incident_id INTEGER REFERENCES incidents(id) ON DELETE CASCADE,
	at          TEXT NOT NULL,
	event       TEXT NOT NULL,
	channel     TEXT NOT NULL,
	attempts    INTEGER NOT NULL DEFAULT 0,
	error       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notifications_incident ON notifications(incident_id, id);
