package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// sambaCheck: smbd and testparm installed, and smbd's version.
type sambaCheck struct{ *doc }

func (c sambaCheck) run(context.Context) {
	smbd := c.opt.Smbd
	if smbd == "" {
		smbd = "/usr/sbin/smbd"
		if _, err := os.Stat(smbd); err != nil {
			if p, err := exec.LookPath("smbd"); err == nil {
				smbd = p
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.Timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, smbd, "--version").Output()
	if err != nil {
		c.add("samba", Fail, "apt-get install samba (the fallback share runs Samba's smbd)", "smbd not found or not runnable (%s): %v", smbd, err)
		return
	}
	version := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Version "))
	if _, err := exec.LookPath("testparm"); err != nil {
		if _, err2 := os.Stat("/usr/bin/testparm"); err2 != nil {
			c.add("samba", Fail, "apt-get install samba-common-bin", "smbd %s, but testparm (which validates the share's config) is missing", version)
			return
		}
	}
	// The share loads full_audit: without it smbd refuses every tree
	// connect (vfs_init failed) while it runs and listens.
	if err := samba.FullAuditModule(ctx, smbd); err != nil {
		c.add("samba", Fail, "apt-get install samba-vfs-modules", "smbd %s, but the fallback share cannot work: %v", version, err)
		return
	}
	c.add("samba", OK, "", "smbd %s (%s), full_audit module present", version, smbd)
}

// share logs on to the fallback share as the MFP account and connects it,
// as an MFP does (samba.ProbeShare): smbd running is not the share
// working. The password is the config's (doctor runs as root or as the
// daemon's user, who both read [receiver] password_file).
func (c receiverCheck) share(ctx context.Context) {
	cfg := c.cfg
	rc := cfg.Receiver
	if !rc.Enabled || !c.configOK {
		return
	}
	ip, port, err := samba.ParseListen(rc.Listen)
	if err != nil {
		c.add("receiver.share", Fail, "set [receiver] listen in "+c.configFile+" to this box's LAN address", "[receiver] listen %s: %v", rc.Listen, err)
		return
	}
	if rc.Password.IsZero() {
		c.add("receiver.share", Skip, "set [receiver] password_file in "+c.configFile, "no MFP password read: the share is not probed")
		return
	}
	dir := filepath.Join(absDataDir(cfg), "receiver")
	smbdDir := filepath.Join(dir, "smbd")
	if rc.ExternalSMBD {
		smbdDir = rc.SmbdDir
	}
	h := samba.ProbeShare(ctx, samba.ShareProbe{Listen: ip, Port: port, Share: rc.Share, Account: samba.Account{Name: rc.Account, Password: rc.Password},
		Inbox: receiver.Inbox(dir), SmbdDir: smbdDir, Smbd: c.opt.Smbd, Unit: rc.ExternalSMBD, Timeout: c.opt.Timeout})
	if h.OK() {
		c.add("receiver.share", OK, "", "%s (%d ms)", h.Detail, h.MS)
		return
	}
	detail := fmt.Sprintf("the fallback share refuses the MFPs (%s): %s", h.Cause, h.Detail)
	if h.SmbdLog != "" {
		detail += "; smbd's log: " + h.SmbdLog
	}
	c.add("receiver.share", Fail, h.Fix, "%s", detail)
}

// receiverCheck: the fallback share's layout and state as the daemon left
// them, then the share itself as an MFP sees it.
type receiverCheck struct{ *doc }

func (c receiverCheck) run(ctx context.Context) {
	c.unit()
	c.applied()
	c.share(ctx)
}

// unit: on a box with scanwarden-smbd.service installed, the daemon
// must leave smbd to that unit.
func (c receiverCheck) unit() {
	cfg := c.cfg
	if !cfg.Receiver.Enabled {
		c.add("receiver", Skip, "", "the fallback share is off ([receiver] enabled = false)")
		return
	}
	if _, err := os.Stat(c.opt.SMBUnit); err == nil && !cfg.Receiver.ExternalSMBD {
		c.add("receiver", Warn, "set [receiver] external_smbd = true in "+c.configFile,
			"%s is installed but the daemon starts smbd itself: every restart of scanwarden.service kills that smbd and the scans in flight",
			c.opt.SMBUnit)
		return
	}
	c.add("receiver", OK, "", "fallback share \\\\%s\\%s, account %s, smbd %s", cfg.Receiver.Listen, cfg.Receiver.Share, cfg.Receiver.Account,
		map[bool]string{true: "in its own unit", false: "started by the daemon"}[cfg.Receiver.ExternalSMBD])
	// Who may connect, as the running daemon last set it (it follows the
	// registered MFPs).
	allow, warning, ok := receiver.ReadAllow(filepath.Join(absDataDir(cfg), "receiver"))
	switch {
	case !ok:
	case warning != "":
		c.add("receiver.allow", Warn, "register the MFPs or set [receiver] allow in "+c.configFile, "%s", warning)
	default:
		c.add("receiver.allow", OK, "", "the fallback share admits %s", strings.Join(allow, " "))
	}
	// Whether the daemon can tell that smbd no longer writes a scan: until
	// it can, it takes none (they wait in the inbox).
	switch why, ok := receiver.ReadIngestStopped(filepath.Join(absDataDir(cfg), "receiver")); {
	case !ok:
	case why != "":
		c.add("receiver.ingest", Fail, "fix what it names; the held scans are taken as soon as it works", "%s", receiver.IngestStoppedWarning(why))
	default:
		c.add("receiver.ingest", OK, "", "scans are taken from the inbox once nobody holds them open for writing (file leases work)")
	}
}

// applied: in the installed layout (external_smbd) root applies the list
// the daemon hands it (samba.AllowFile) to smbd's config and keeps a copy
// (samba.AppliedFile); smbd admits what that copy says, so it must be the
// daemon's list. The words of a difference are the daemon's own fault's
// (samba.AllowLag). A list written less than the daemon's own grace ago
// and neither applied nor refused yet is pending (skip), not a failure.
func (c receiverCheck) applied() {
	const id = "receiver.allow.applied"
	rc := c.cfg.Receiver
	switch {
	case !rc.Enabled:
		return
	case !rc.ExternalSMBD:
		c.add(id, Skip, "", "does not apply: the daemon starts smbd itself and puts its allowlist in smb.conf (root applies a list only with [receiver] external_smbd)")
		return
	}
	file := samba.AllowFile(filepath.Join(absDataDir(c.cfg), "receiver"))
	lag, written, err := samba.ReadLag(file, rc.SmbdDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.add(id, Skip, "systemctl start scanwarden (the daemon writes its list when it starts)", "the daemon has handed root no allowlist yet: %v", err)
	case errors.Is(err, fs.ErrPermission):
		c.add(id, Warn, "run doctor as root (sudo scanwarden doctor)", "%v", err)
	case err != nil:
		c.add(id, Fail, "systemctl restart scanwarden (the daemon writes its list again when it starts)", "%v", err)
	case lag.Applied():
		c.add(id, OK, "", "root applied the daemon's allowlist. %s", lag.Lists(file, rc.SmbdDir))
	case pending(lag, c.opt.Now().Sub(written)):
		c.add(id, Skip, "", "pending: the daemon wrote its allowlist %v ago and root has not applied it yet; root is given %v from the write, as the daemon gives it before it raises its fault. %s",
			c.opt.Now().Sub(written).Round(100*time.Millisecond), samba.DefaultHandoverTimes.Grace(), lag.Lists(file, rc.SmbdDir))
	default:
		c.add(id, Fail, samba.LagFix(file), "root has not applied the allowlist the daemon last wrote %v ago: %s. %s",
			c.opt.Now().Sub(written).Round(time.Second), lag.Effect(), lag.Lists(file, rc.SmbdDir))
	}
}

// pending says whether a list root has not applied, written ago, is still
// within the time the daemon gives root (samba.DefaultHandoverTimes'
// Grace: its fault comes only after it) and so is not a failure yet. A
// list root refused since it was written is not pending: root has said no.
func pending(lag samba.AllowLag, ago time.Duration) bool {
	return lag.RootRefused == "" && ago >= 0 && ago < samba.DefaultHandoverTimes.Grace()
}
