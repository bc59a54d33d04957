-- Failed-logon ledger (smbcheck.Ledger): one row per logon attempt that was
-- sent and has not been cleared by a later success. cause = '' while the
-- attempt is pending; a pending row left by a crash still counts.
CREATE TABLE logon_attempts (
	id      INTEGER PRIMARY KEY,
	account TEXT NOT NULL,
	form    TEXT NOT NULL,
	typed   TEXT NOT NULL,
	at      TEXT NOT NULL,
	cause   TEXT NOT NULL DEFAULT '',
	status  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX logon_attempts_account_at ON logon_attempts(account, at);

-- Small named values the program keeps (e.g. the ledger's fingerprint key).
CREATE TABLE settings (
	key   TEXT PRIMARY KEY,
	value BLOB NOT NULL
);
