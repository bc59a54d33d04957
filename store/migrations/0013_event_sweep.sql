-- What the checks after a send failure that named no destination found
-- (incident.Sweep as JSON; '' = not swept: the event named a destination,
-- matched nothing, or its checks are still running).
ALTER TABLE snmp_events ADD COLUMN sweep TEXT NOT NULL DEFAULT '';
