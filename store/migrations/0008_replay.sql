-- The SNMPv3 trap listener's replay guard (RFC 3414 time window), kept
-- across restarts: per sender engine the latest boots/time and when it
-- arrived, and the digests of the traps taken within the window. Rewritten
-- whole by SaveReplay; bounded by the guard (1,024 engines, 8,192 digests).
CREATE TABLE snmp_replay_engines (
	engine_id   BLOB PRIMARY KEY,
	boots       INTEGER NOT NULL,
	engine_time INTEGER NOT NULL,
	at          TEXT NOT NULL
);
CREATE TABLE snmp_replay_digests (
	engine_id BLOB NOT NULL,
	digest    BLOB NOT NULL,
	at        TEXT NOT NULL,
	PRIMARY KEY (engine_id, digest)
);
