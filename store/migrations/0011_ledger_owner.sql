-- The process that reserved a ledger row (boot id, pid and start time): a
-- pending row whose process has ended is an interrupted logon — it counts
-- toward the budget, but it is no failure of its form and password, and a
-- later success clears it. '' for rows written before this migration.
ALTER TABLE logon_attempts ADD COLUMN owner TEXT NOT NULL DEFAULT '';
