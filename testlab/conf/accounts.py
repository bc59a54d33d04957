#!/usr/bin/python3
"""Writes the lab's domain policy, accounts, groups and DNS records into the
offline sam.ldb of a freshly provisioned Samba AD DC (before it starts).

usage: accounts.py SMB_CONF all     policy, every account but grace and pwsoon, groups, DNS
       accounts.py SMB_CONF grace   grace only: run it under faketime -f -40d so
                                     her password is 40 days old (max age 30)
       accounts.py SMB_CONF pwsoon  pwsoon only: run it under faketime -f -25d so
                                     its password expires in 5 days (max age 30)
The password comes from $SWLAB_PASSWORD; DNS records from $SWLAB_DNS_RECORDS
("name=ip name=ip ...", zone $SWLAB_DNS_DOMAIN).
"""
import os
import sys
import time

import ldb
from samba.auth import system_session
from samba.ndr import ndr_pack
from samba.param import LoadParm
from samba.provision.sambadns import ARecord
from samba.samdb import SamDB

TICKS = 10**7  # 100 ns units per second
EPOCH_DIFF = 11644473600  # seconds between 1601-01-01 and 1970-01-01


def nttime(unix):
    return str(int((unix + EPOCH_DIFF) * TICKS))


def interval(seconds):
    return str(-seconds * TICKS)  # AD stores durations as negative 100 ns counts


def modify(db, dn, **attrs):
    m = ldb.Message(ldb.Dn(db, dn))
    for name, value in attrs.items():
        m[name] = ldb.MessageElement(value, ldb.FLAG_MOD_REPLACE, name)
    db.modify(m)


def user_dn(db, name):
    res = db.search(db.domain_dn(), scope=ldb.SCOPE_SUBTREE,
                    expression="(sAMAccountName=%s)" % name, attrs=["dn"])
    if len(res) != 1:
        raise SystemExit("accounts.py: user %s not found" % name)
    return str(res[0].dn)


def warning_accounts(db, pw):
    """The warnings' accounts (issue 22): each test its own, so no other
    test's lockout count or expiry moves them."""
    db.newuser("contractor", pw)
    modify(db, user_dn(db, "contractor"), accountExpires=nttime(time.time() + 3 * 86400),
           description="warnings: accountExpires 3 days after lab up")
    db.newuser("hammered", pw)
    modify(db, user_dn(db, "hammered"),
           description="warnings: lockout-pressure test raises its badPwdCount with smbclient between two checks")


def main():
    conf, mode = sys.argv[1], sys.argv[2]
    pw = os.environ["SWLAB_PASSWORD"]
    lp = LoadParm()
    lp.load(conf)
    db = SamDB(url=lp.samdb_url(), session_info=system_session(), lp=lp)

    if mode == "grace":
        db.newuser("grace", pw)
        return
    if mode == "pwsoon":
        db.newuser("pwsoon", pw)
        modify(db, user_dn(db, "pwsoon"), description="warnings: password expires in 5 days (set 25 days ago, max age 30)")
        return

    # lockout 3 / 30 min / 30 min, max password age 30 days
    modify(db, db.domain_dn(),
           lockoutThreshold="3",
           lockoutDuration=interval(30 * 60),
           lockOutObservationWindow=interval(30 * 60),
           maxPwdAge=interval(30 * 86400))

    users = ["alice", "bob"] + ["badpw%d" % i for i in range(1, 9)] + \
            ["dave", "erin", "frank", "heidi", "ivan", "judy", "jdoe", "ldapreader", "labcheck",
             "dotdisabled", "dotlocked", "servewrong", "regwrong", "dcfix", "rxcrash", "smartcard"]
    for u in users:
        db.newuser(u, pw)

    db.newgroup("scanners", description="scan users")
    db.newgroup("finance", description="finance (alice is not a member)")
    db.add_remove_group_members("scanners", ["alice"], add_members_operation=True)
    db.add_remove_group_members("finance", ["bob"], add_members_operation=True)

    db.disable_account("(sAMAccountName=dave)")
    db.disable_account("(sAMAccountName=dotdisabled)")
    modify(db, user_dn(db, "frank"), pwdLastSet="0")
    modify(db, user_dn(db, "heidi"), accountExpires=nttime(time.time() - 86400))
    modify(db, user_dn(db, "ivan"), userWorkstations="MFP01")
    modify(db, user_dn(db, "judy"), logonHours=bytes(21))
    # a normal account (0x200) that must log on with a smart card (0x40000)
    modify(db, user_dn(db, "smartcard"), userAccountControl=str(0x200 | 0x40000))
    modify(db, user_dn(db, "jdoe"), userPrincipalName="john.doe@kyolab.test")
    modify(db, user_dn(db, "ldapreader"), description="read-only LDAP bind account")
    modify(db, user_dn(db, "labcheck"), description="wrong-password checks of testlab/lab selftest")
    modify(db, user_dn(db, "dotlocked"), description="locked by smbcheck's own test (.\\user on a DC)")
    modify(db, user_dn(db, "servewrong"), description="serve's whole-program test: a destination stored with a wrong password")
    modify(db, user_dn(db, "regwrong"), description="registry's test of a wrong stored password (logs on right after)")

    warning_accounts(db, pw)

    zone = os.environ["SWLAB_DNS_DOMAIN"]
    base = ",".join("DC=%s" % p for p in zone.split("."))
    container = "DC=%s,CN=MicrosoftDNS,DC=DomainDnsZones,%s" % (zone, base)
    for item in os.environ.get("SWLAB_DNS_RECORDS", "").split():
        name, ip = item.split("=", 1)
        m = ldb.Message(ldb.Dn(db, "DC=%s,%s" % (name, container)))
        m["objectClass"] = ["top", "dnsNode"]
        m["dnsRecord"] = ldb.MessageElement([ndr_pack(ARecord(ip))], ldb.FLAG_MOD_ADD, "dnsRecord")
        db.add(m)


if __name__ == "__main__":
    main()
