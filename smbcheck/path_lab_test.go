package smbcheck

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/testlab"
)

// TestLabPathBlamesParent: a folder the account may not enter (a deny of
// traverse and list on scans\noentry) refuses its children; the path step
// names noentry, not noentry\inner, as the folder to fix.
func TestLabPathBlamesParent(t *testing.T) {
	lab := testlab.Require(t)
	smbcacls, err := exec.LookPath("smbcacls")
	if err != nil {
		testlab.Missing(t, "smbcacls not installed (testlab/deps)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "Administrator", Password: lab.AdminPassword, Domain: lab.Domain}}
	s, err := d.Dial(ctx, lab.DCIP+":445")
	if err != nil {
		t.Fatalf("Administrator session: %v", err)
	}
	defer s.Logoff()
	sh, err := s.Mount(`\\` + lab.DCIP + `\scans`)
	if err != nil {
		t.Fatal(err)
	}
	defer sh.Umount()
	for _, dir := range []string{"noentry", `noentry\inner`} {
		if err := sh.Mkdir(dir, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatalf("mkdir %s: %v", dir, err)
		}
	}
	// Deny alice FILE_LIST_DIRECTORY and FILE_TRAVERSE on noentry only.
	out, err := exec.CommandContext(ctx, smbcacls, "//"+lab.DCHost+"/scans", "noentry", "--use-kerberos=disabled",
		"-U", "Administrator%"+lab.AdminPassword, "--add", "ACL:"+lab.Domain+`\alice:DENIED/0x0/0x00000021`).CombinedOutput()
	if err != nil {
		t.Fatalf("smbcacls: %v: %s", err, strings.ReplaceAll(string(out), lab.AdminPassword, "***"))
	}
	r := runLab(t, lab, labCase{dest: "//" + lab.DCHost + "/scans/noentry/inner", user: lab.Domain + `\alice`, opts: Options{NoWrite: true}, want: scanwarden.CauseNoWritePermission})
	p := stepIs(t, r, StepPath, StatusFail)
	if p.Evidence["refused"] != `scans\noentry` || !strings.Contains(r.Verdict.Fix, `on scans\noentry and`) {
		t.Errorf("the refusal is not blamed on scans\\noentry: %v / %s", p.Evidence, r.Verdict.Fix)
	}
}
