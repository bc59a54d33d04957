-- Receiver (package receiver): one row per file the fallback share took in.
-- file is the client-provided name (made safe): data, never a command.
-- state: held, incomplete, delivering, delivered, failed, purged.
CREATE TABLE scans (
	id           INTEGER PRIMARY KEY,
	destination  TEXT NOT NULL DEFAULT '',
	folder       TEXT NOT NULL,
	file         TEXT NOT NULL,
	size         INTEGER NOT NULL,
	sha256       TEXT NOT NULL,
	state        TEXT NOT NULL,
	received_at  TEXT NOT NULL,
	delivered_at TEXT NOT NULL DEFAULT '',
	error        TEXT NOT NULL DEFAULT '',
	inbox_path   TEXT NOT NULL DEFAULT '',
	held_path    TEXT NOT NULL DEFAULT '',
	writer       TEXT NOT NULL DEFAULT '',
	remote_name  TEXT NOT NULL DEFAULT '',
	attempts     INTEGER NOT NULL DEFAULT 0,
	next_attempt TEXT NOT NULL DEFAULT '',
	claim        TEXT NOT NULL DEFAULT '',
	forced       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX scans_state ON scans(state, destination, next_attempt);
CREATE INDEX scans_inbox ON scans(inbox_path);
