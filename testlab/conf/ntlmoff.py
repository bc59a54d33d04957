#!/usr/bin/python3
"""Writes the accounts of the lab's second realm (NTLMOFF.TEST, a DC with
`ntlm auth = disabled`) into its offline sam.ldb before it starts.

usage: ntlmoff.py SMB_CONF
The password comes from $SWLAB_PASSWORD. Accounts (all with that password):
  kim      logs on over Kerberos (the NTLM-refusing cases, UPN, --auth kerberos)
  kwrong   the wrong-password cases (its badPwdCount is read after the set)
  kdis     disabled
  kskew    the clock-skew case (against the KDC that runs 10 minutes ahead)
Lockout policy: threshold 100 (tests rerun within the window must not lock kwrong), duration and window 30 min.
"""
import os
import sys

import ldb
from samba.auth import system_session
from samba.param import LoadParm
from samba.samdb import SamDB


def interval(seconds):
    return str(-seconds * 10**7)  # AD stores durations as negative 100 ns counts


def main():
    conf = sys.argv[1]
    pw = os.environ["SWLAB_PASSWORD"]
    lp = LoadParm()
    lp.load(conf)
    db = SamDB(url=lp.samdb_url(), session_info=system_session(), lp=lp)
    m = ldb.Message(ldb.Dn(db, db.domain_dn()))
    for name, value in (("lockoutThreshold", "100"), ("lockoutDuration", interval(1800)),
                        ("lockOutObservationWindow", interval(1800))):
        m[name] = ldb.MessageElement(value, ldb.FLAG_MOD_REPLACE, name)
    db.modify(m)
    for u in ("kim", "kwrong", "kdis", "kskew"):
        db.newuser(u, pw)
    db.disable_account("(sAMAccountName=kdis)")


if __name__ == "__main__":
    main()
