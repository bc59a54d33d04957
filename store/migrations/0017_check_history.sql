-- Every check of a destination, kept 30 days for the patterns of package
-- pattern (a 14-day window by default): when, whether it passed, its cause,
-- and what the server's reading account counted then (package evidence):
-- the share's connections (-1: not counted) against its limit (0: none or
-- not known), and the server's last start seen in its System log ('': not
-- seen). destination and host are text: the history outlives a removed
-- destination. The reports kept so far are its start.
CREATE TABLE check_history (
	id            INTEGER PRIMARY KEY,
	destination   TEXT NOT NULL COLLATE NOCASE,
	host          TEXT NOT NULL COLLATE NOCASE,
	at            TEXT NOT NULL,
	ok            INTEGER NOT NULL,
	cause         TEXT NOT NULL DEFAULT '',
	sessions      INTEGER NOT NULL DEFAULT -1,
	session_limit INTEGER NOT NULL DEFAULT 0,
	server_start  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX check_history_destination ON check_history(destination, at);
CREATE INDEX check_history_host ON check_history(host, at);

INSERT INTO check_history (destination, host, at, ok, cause)
	SELECT d.name, coalesce(json_extract(r.report, '$.target.host'), d.host), r.at, r.cause = 'ok', r.cause
	FROM destination_reports r JOIN destinations d ON d.id = r.destination_id;
