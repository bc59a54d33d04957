-- API tokens get a scope: metrics (only /metrics), read (the GET API and
-- /metrics) or admin (also checks, imports, settings). Tokens made before
-- scopes existed could do everything; they become "read": every reader
-- (a scrape, a dashboard) keeps working, and nothing that was only ever
-- handed a token to read can start checks (SMB and AD logons) any more.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'read'
	CHECK (scope IN ('metrics', 'read', 'admin'));

-- Anonymous attempts (failed logins) are kept apart from the admin's
-- actions, one row per client address, action and hour with a count, and
-- pruned on their own: a flood of them never pushes an authenticated action
-- out of audit_log.
CREATE TABLE audit_anonymous (
	client       TEXT NOT NULL,
	action       TEXT NOT NULL,
	window_start TEXT NOT NULL,
	target       TEXT NOT NULL DEFAULT '',
	first_at     TEXT NOT NULL,
	last_at      TEXT NOT NULL,
	count        INTEGER NOT NULL,
	PRIMARY KEY (client, action, window_start)
);
CREATE INDEX audit_anonymous_last ON audit_anonymous(last_at);

INSERT INTO audit_anonymous(client, action, window_start, target, first_at, last_at, count)
	SELECT client, action, substr(at, 1, 13) || ':00:00Z', max(target), min(at), max(at), count(*)
	FROM audit_log WHERE actor = 'anonymous'
	GROUP BY client, action, substr(at, 1, 13);
DELETE FROM audit_log WHERE actor = 'anonymous';
