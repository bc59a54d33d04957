-- The forms (user name form + password fingerprint) that last succeeded per
-- account: an interrupted logon of such a form spends, with the others like
-- it, one slot of the failure budget (smbcheck.Ledger). A definite failure of
-- the form removes its row; rows not refreshed for 90 days go.
CREATE TABLE logon_good (
	account TEXT NOT NULL,
	form    TEXT NOT NULL,
	at      TEXT NOT NULL,
	PRIMARY KEY (account, form)
);
