-- A device's SMB client (issue 29): for each field the admin's setting
-- ('' = none) and what its own logon on the fallback share showed ('' =
-- never seen), when, and in which session. Rows of fields that only show
-- (workstation, user_form) have no admin value.
CREATE TABLE device_profile (
	device_id    INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
	field        TEXT NOT NULL,
	admin_value  TEXT NOT NULL DEFAULT '',
	seen_value   TEXT NOT NULL DEFAULT '',
	seen_at      TEXT NOT NULL DEFAULT '',
	seen_session TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (device_id, field)
);
