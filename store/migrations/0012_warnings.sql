-- Warnings (package warning): what will fail days ahead although the
-- destination's checks pass. One row per destination and kind while it
-- holds; grouped by kind and subject (the account, or the volume) when
-- shown. destination is the registry's name (text, as for incidents).
-- Times are RFC 3339; '' is "not set".
CREATE TABLE warnings (
	destination  TEXT NOT NULL COLLATE NOCASE,
	kind         TEXT NOT NULL,
	subject      TEXT NOT NULL,
	device       TEXT NOT NULL DEFAULT '',
	headline     TEXT NOT NULL,
	fix          TEXT NOT NULL,
	kyocera_code TEXT NOT NULL DEFAULT '',
	due          TEXT NOT NULL DEFAULT '',
	evidence     TEXT NOT NULL DEFAULT '{}',
	since        TEXT NOT NULL,
	updated      TEXT NOT NULL,
	PRIMARY KEY (destination, kind)
);

-- Free space of each destination volume (\\host\share, lower-cased) as the
-- checks' write steps measured it: the trend disk-filling projects.
CREATE TABLE volume_samples (
	volume TEXT NOT NULL,
	at     TEXT NOT NULL,
	free   INTEGER NOT NULL,
	total  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX volume_samples_volume_at ON volume_samples(volume, at);

-- The account as each destination's last check saw it (before its
-- replay): lockout-pressure compares the next check with it.
CREATE TABLE accounts_seen (
	destination   TEXT NOT NULL COLLATE NOCASE,
	account       TEXT NOT NULL,
	at            TEXT NOT NULL,
	bad_pwd_count INTEGER NOT NULL,
	last_bad      TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (destination)
);

-- The warning groups (kind and subject) the admin was told of: raised once,
-- cleared once, whichever process (the daemon, `check`) saw them first. The
-- group as it was told, for the cleared message.
CREATE TABLE warning_notices (
	key   TEXT PRIMARY KEY,
	grp   TEXT NOT NULL,
	since TEXT NOT NULL
);
