-- Warnings that tell the truth (issue 30).
-- scanwarden's own failed logons, kept beside the ledger (which forgets a
-- failure when its window passes or a later success clears it) for as long
-- as lockout pressure can need them: at is when the logon was reserved
-- (before its AUTHENTICATE left), until when its answer came ('' and
-- unknown = 1 when nobody saw it).
CREATE TABLE own_failures (
	account TEXT NOT NULL,
	at      TEXT NOT NULL,
	until   TEXT NOT NULL DEFAULT '',
	unknown INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX own_failures_account_at ON own_failures(account, at);

-- previous-password: when each form (user name form + password
-- fingerprint) that logged on was last known to be the account's current
-- password ('' never known).
ALTER TABLE logon_good ADD COLUMN current_at TEXT NOT NULL DEFAULT '';
