-- How a destination logs on: ntlm (what MFPs send), kerberos (a
-- Kerberos-capable MFP) or auto (Kerberos, then NTLM).
ALTER TABLE destinations ADD COLUMN auth TEXT NOT NULL DEFAULT 'ntlm' CHECK (auth IN ('ntlm', 'kerberos', 'auto'));
