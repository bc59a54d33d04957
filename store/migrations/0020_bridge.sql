-- The bridge (issue 29): a destination whose MFP cannot meet its server's
-- demands while scanwarden can is bridged — the MFP scans to the fallback
-- share, the forwarder delivers. bridged_at is when it was bridged ('' : it
-- is not). An edit or an import of the destination leaves it as it is.
ALTER TABLE destinations ADD COLUMN bridged_at TEXT NOT NULL DEFAULT '';
