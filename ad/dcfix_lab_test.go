package ad

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/testlab"
)

// setLabPassword sets user's password on the lab DC, as an admin does in
// ADUC (samba-tool over LDAP as Administrator).
func setLabPassword(t *testing.T, lab *testlab.Lab, user, pw string) {
	t.Helper()
	out, err := exec.Command("samba-tool", "user", "setpassword", user, "--newpassword="+pw,
		"-H", "ldap://"+lab.DCIP, "-U", "Administrator%"+lab.AdminPassword).CombinedOutput()
	if err != nil {
		t.Fatalf("samba-tool user setpassword %s: %v\n%s", user, err, out)
	}
}

// Issue 18, "a fix on the DC side is seen": a destination stored with a
// password the DC no longer takes fails with bad-credentials, and the same
// password is then not replayed for the window. The admin fixes the account
// instead of the MFP (sets the DC password to the one the MFP stores): with
// the directory, the next check sees pwdLastSet after the failure, replays
// the stored password at once and passes. Uses the lab account dcfix (one
// wrong logon per run, then a good one: its badPwdCount stays below 3).
func TestLabDCFixLiftsSamePasswordBlock(t *testing.T) {
	lab := testlab.Require(t)
	dir := labDir(t, lab, nil)
	dest := "//" + lab.DCHost + "/scans"
	stored := fmt.Sprintf("Stored-%d-Mfp.7", time.Now().UnixNano()%1e9)
	setLabPassword(t, lab, "dcfix", lab.Password)
	led := &smbclient.MemoryLedger{}

	rep := diagnose(t, lab, dir, dest, `KYOLAB\dcfix`, stored, "MFP01", led, true)
	if rep.Verdict.Cause != scanwarden.CauseBadCredentials || rep.Verdict.FromLedger {
		t.Fatalf("stored password the DC does not take: %s %v%s", rep.Verdict.Cause, rep.Verdict.FromLedger, reportString(rep))
	}
	rep = diagnose(t, lab, dir, dest, `KYOLAB\dcfix`, stored, "MFP01", led, true)
	if !rep.Verdict.FromLedger || rep.Verdict.Cause != scanwarden.CauseBadCredentials {
		t.Fatalf("the same failing password was replayed before any fix: %s%s", rep.Verdict.Cause, reportString(rep))
	}

	setLabPassword(t, lab, "dcfix", stored)
	rep = diagnose(t, lab, dir, dest, `KYOLAB\dcfix`, stored, "MFP01", led, true)
	if !rep.OK() {
		t.Fatalf("after the DC password was set to the stored one: %s%s", rep.Verdict.Cause, reportString(rep))
	}
	if s := rep.Step(smbcheck.StepSession); s == nil || s.Status != smbcheck.StatusOK || strings.Contains(fmt.Sprint(s.Evidence), "not_replayed") {
		t.Fatalf("the logon was not replayed: %+v", s)
	}
	u, err := dir.User(context.Background(), `KYOLAB\dcfix`, "MFP01")
	if err != nil {
		t.Fatal(err)
	}
	if u.BadPwdCount != 0 || u.Locked {
		t.Fatalf("dcfix after the fix: badPwdCount %d, locked %v", u.BadPwdCount, u.Locked)
	}
	setLabPassword(t, lab, "dcfix", lab.Password)
}
