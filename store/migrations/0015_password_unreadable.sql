-- A contact whose stored password could not be read from its address book
-- (not in the device's encrypted hex form) is imported without one; this
-- says why, until a password is entered ('' = the password is known).
ALTER TABLE destinations ADD COLUMN password_unreadable TEXT NOT NULL DEFAULT '';
