package smbcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/secdesc"
	"github.com/scanwarden/scanwarden/smbconn"
)

// aclStep judges the folder's security descriptor against the account's
// SIDs and the write step; the last step.
type aclStep struct{ *checker }

func (aclStep) ids() []string { return []string{StepACL} }

func (c aclStep) run(ctx context.Context) bool {
	c.stepACL(ctx, c.share)
	return true
}

// stepACL is the permission truth: it reads the folder's security
// descriptor over SMB, evaluates its DACL for the account's SIDs from the
// directory, names the ACE that decides, and compares the result with what
// the canary write saw. A disagreement points away from the folder's NTFS
// permissions — to the share's permissions or a filter driver. It runs only
// when the directory gave the account's SIDs.
func (c aclStep) stepACL(ctx context.Context, sh *smbconn.Share) {
	if c.account == nil || !c.account.Found || len(c.account.SIDs) == 0 {
		return
	}
	if sh.SMB1() {
		c.skipWhy("not run: the folder's security descriptor is read over SMB2/3 only", StepACL)
		return
	}
	s := c.begin(StepACL)
	folder := strings.Join(c.t.Folders(), `\`)
	shown := c.t.Share
	if folder != "" {
		shown += `\` + folder
	}
	acc, ok := c.readACL(ctx, sh, s, folder, shown)
	if !ok {
		return
	}
	for k, v := range acc.Evidence {
		s.Evidence[k] = v
	}
	s.Evidence["acl_add_file"] = acc.AddFile
	s.Evidence["acl_write_data"] = acc.WriteData
	s.Evidence["acl_delete"] = acc.CanDelete()
	for k, v := range acc.Decisive {
		s.Evidence["ace_"+k] = v
	}
	w := c.r.Step(StepWrite)
	if w == nil || w.Status == StatusSkipped {
		// No canary (--no-write): the ACL is the only judge.
		c.judgeACLAlone(s, acc, shown)
		return
	}
	c.judgeACLWithCanary(s, acc, w, shown)
}

// readACL reads and evaluates the folder's security descriptor for the
// account's SIDs; when it cannot, it warns on s and reports false.
func (c aclStep) readACL(ctx context.Context, sh *smbconn.Share, s *stepState, folder, shown string) (secdesc.Access, bool) {
	actx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	raw, err := sh.SecurityInfo(actx, folder)
	if err != nil {
		_, ev := classify(StepACL, err)
		for k, v := range ev {
			s.Evidence[k] = v
		}
		c.warn(s, fmt.Sprintf("the security descriptor of %s could not be read (%v): permissions judged by the canary only", shown, err))
		return secdesc.Access{}, false
	}
	acc, err := secdesc.EvaluateNamed(raw, c.account.SIDs, c.account.SIDNames)
	if err != nil {
		s.Evidence["error"] = err.Error()
		c.warn(s, fmt.Sprintf("the security descriptor of %s could not be parsed: %v", shown, err))
		return secdesc.Access{}, false
	}
	return acc, true
}

// aclDeciding is the entry that decides whether the account may create
// files: the one on add-file, or on write-data when only that is missing.
func aclDeciding(acc secdesc.Access) string {
	if acc.AddFile && !acc.WriteData {
		return acc.Decisive[secdesc.RightWriteData]
	}
	return acc.Decisive[secdesc.RightAddFile]
}

// judgeACLAlone judges the folder by its ACL alone (no canary was written).
func (c aclStep) judgeACLAlone(s *stepState, acc secdesc.Access, shown string) {
	who, deciding := c.form.Typed, aclDeciding(acc)
	switch {
	case !acc.AddFile || !acc.WriteData:
		c.fail(s, scanwarden.CauseNoWritePermission, fmt.Sprintf("the ACL of %s does not let %s create files (%s)", shown, who, deciding),
			fmt.Sprintf("Grant %s 'Modify' on %s (Security tab); the deciding entry is %s.", who, shown, deciding))
	case !acc.CanDelete():
		msg := fmt.Sprintf("the ACL of %s lets %s create and write files but not delete them (%s)", shown, who, acc.Decisive[secdesc.RightDelete])
		c.warnAction(s, msg, msg)
	default:
		c.ok(s, fmt.Sprintf("the ACL of %s lets %s create, write and delete files (%s)", shown, who, deciding))
	}
}

// judgeACLWithCanary compares what the ACL allows with what the canary (step
// w) proved, and names the layer that decides when they disagree.
func (c aclStep) judgeACLWithCanary(s *stepState, acc secdesc.Access, w *Step, shown string) {
	who, deciding := c.form.Typed, aclDeciding(acc)
	aclWrite := acc.AddFile && acc.WriteData
	canaryWrite := w.Status == StatusOK || w.Status == StatusWarn || w.Cause == scanwarden.CauseNoDeletePermission || w.Cause == scanwarden.CauseDiskFull
	canaryDelete := w.Status == StatusOK || w.Status == StatusWarn
	if w.Cause == scanwarden.CauseDiskFull {
		canaryDelete = acc.CanDelete() // not observed
	}
	s.Evidence["canary_write"] = canaryWrite
	s.Evidence["canary_delete"] = canaryDelete
	switch {
	case aclWrite == canaryWrite && acc.CanDelete() == canaryDelete:
		detail := fmt.Sprintf("the ACL of %s agrees with the canary: create %s, delete %s", shown, yesNo(aclWrite), yesNo(acc.CanDelete()))
		if !aclWrite {
			detail += " — decided by " + deciding
			c.refineFix(scanwarden.CauseNoWritePermission, fmt.Sprintf(" The deciding entry of the folder's ACL: %s.", deciding))
		} else if !acc.CanDelete() {
			detail += " — decided by " + acc.Decisive[secdesc.RightDelete]
			c.refineFix(scanwarden.CauseNoDeletePermission, fmt.Sprintf(" The deciding entry of the folder's ACL: %s.", acc.Decisive[secdesc.RightDelete]))
		}
		c.ok(s, detail)
	case aclWrite && !canaryWrite:
		s.Evidence["disagree"] = true
		c.warn(s, fmt.Sprintf("the ACL of %s lets %s create files (%s), yet the server refused the canary: the refusal comes from the share level (share permissions, 'read only', 'write list') or a filter driver, not from the folder's NTFS permissions", shown, who, deciding))
		c.replaceFix(scanwarden.CauseNoWritePermission, fmt.Sprintf("The folder's NTFS permissions already allow %s to write; give it Change on the share's permissions (Windows: share → Advanced Sharing → Permissions) or, on Samba, remove 'read only = yes' / add it to 'write list' for share %s.", who, c.t.Share))
	case !aclWrite && canaryWrite:
		s.Evidence["disagree"] = true
		c.warn(s, fmt.Sprintf("the ACL of %s does not let %s create files (%s), yet the canary was written: a privilege, an ownership rule or the server's own permission layer decides otherwise", shown, who, deciding))
	default:
		s.Evidence["disagree"] = true
		c.warn(s, fmt.Sprintf("the ACL of %s and the canary disagree on deleting: ACL %s (%s), canary %s", shown, yesNo(acc.CanDelete()), acc.Decisive[secdesc.RightDelete], yesNo(canaryDelete)))
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// refineFix appends to the fix of the first failure when it has cause.
func (c aclStep) refineFix(cause scanwarden.Cause, extra string) {
	if c.firstFx != nil && c.firstFx.cause == cause {
		if c.firstFx.fix == "" {
			c.firstFx.fix = cause.Info().Fix
		}
		c.firstFx.fix += extra
	}
}

// replaceFix sets the fix of the first failure when it has cause.
func (c aclStep) replaceFix(cause scanwarden.Cause, fix string) {
	if c.firstFx != nil && c.firstFx.cause == cause {
		c.firstFx.fix = fix
	}
}
