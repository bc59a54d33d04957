-- One cause, one incident (issue 30): destinations failing for the same
-- reason on the same server or with the same account are one group
-- (incident.Group), told of when it opens and when it closes. key is
-- incident.Key.ID(); members the destinations in it now (a JSON array).
CREATE TABLE incident_groups (
	id        INTEGER PRIMARY KEY,
	key       TEXT NOT NULL,
	kind      TEXT NOT NULL,
	subject   TEXT NOT NULL,
	cause     TEXT NOT NULL,
	phrase    TEXT NOT NULL,
	state     TEXT NOT NULL,
	members   TEXT NOT NULL DEFAULT '[]',
	opened_at TEXT NOT NULL,
	closed_at TEXT NOT NULL DEFAULT ''
);
CREATE INDEX incident_groups_state ON incident_groups(state, closed_at);
