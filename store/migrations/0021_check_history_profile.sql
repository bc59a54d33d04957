-- Which SMB client each check replayed (smbcheck.Report.Profile, worded by
-- Report.Replayed): a device's profile ("device mfp01's profile: SMB 2.1
-- at most, no encryption, writes pdf") or scanwarden's own client. NULL:
-- not recorded (a check kept before this column, or one that replayed
-- nothing). The full profile, each value with its origin, is in the
-- stored report (destination_reports.report, "profile").
ALTER TABLE check_history ADD COLUMN profile TEXT;
