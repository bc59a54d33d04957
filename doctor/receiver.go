package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
)

// samba: smbd and testparm installed, and smbd's version.
func (d *doc) samba() {
	smbd := d.opt.Smbd
	if smbd == "" {
		smbd = "/usr/sbin/smbd"
		if _, err := os.Stat(smbd); err != nil {
			if p, err := exec.LookPath("smbd"); err == nil {
				smbd = p
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.opt.Timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, smbd, "--version").Output()
	if err != nil {
		d.add("samba", Fail, "apt-get install samba (the fallback share runs Samba's smbd)", "smbd not found or not runnable (%s): %v", smbd, err)
		return
	}
	version := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "Version "))
	if _, err := exec.LookPath("testparm"); err != nil {
		if _, err2 := os.Stat("/usr/bin/testparm"); err2 != nil {
			d.add("samba", Fail, "apt-get install samba-common-bin", "smbd %s, but testparm (which validates the share's config) is missing", version)
			return
		}
	}
	// The share loads full_audit: without it smbd refuses every tree
	// connect (vfs_init failed) while it runs and listens.
	if err := samba.FullAuditModule(ctx, smbd); err != nil {
		d.add("samba", Fail, "apt-get install samba-vfs-modules", "smbd %s, but the fallback share cannot work: %v", version, err)
		return
	}
	d.add("samba", OK, "", "smbd %s (%s), full_audit module present", version, smbd)
}

// share logs on to the fallback share as the MFP account and connects it,
// as an MFP does (samba.ProbeShare): smbd running is not the share
// working. The password is the config's (doctor runs as root or as the
// daemon's user, who both read [receiver] password_file).
func (d *doc) share(ctx context.Context, cfg config.Config) {
	rc := cfg.Receiver
	if !rc.Enabled || !d.configOK {
		return
	}
	ip, port, err := samba.ParseListen(rc.Listen)
	if err != nil {
		d.add("receiver.share", Fail, "set [receiver] listen in "+d.configFile+" to this box's LAN address", "[receiver] listen %s: %v", rc.Listen, err)
		return
	}
	if rc.Password.IsZero() {
		d.add("receiver.share", Skip, "set [receiver] password_file in "+d.configFile, "no MFP password read: the share is not probed")
		return
	}
	dir := filepath.Join(absDataDir(cfg), "receiver")
	smbdDir := filepath.Join(dir, "smbd")
	if rc.ExternalSMBD {
		smbdDir = rc.SmbdDir
	}
	h := samba.ProbeShare(ctx, samba.ShareProbe{Listen: ip, Port: port, Share: rc.Share, Account: samba.Account{Name: rc.Account, Password: rc.Password},
		Inbox: receiver.Inbox(dir), SmbdDir: smbdDir, Smbd: d.opt.Smbd, Unit: rc.ExternalSMBD, Timeout: d.opt.Timeout})
	if h.OK() {
		d.add("receiver.share", OK, "", "%s (%d ms)", h.Detail, h.MS)
		return
	}
	detail := fmt.Sprintf("the fallback share refuses the MFPs (%s): %s", h.Cause, h.Detail)
	if h.SmbdLog != "" {
		detail += "; smbd's log: " + h.SmbdLog
	}
	d.add("receiver.share", Fail, h.Fix, "%s", detail)
}

// receiverUnit: on a box with scanwarden-smbd.service installed, the daemon
// must leave smbd to that unit.
func (d *doc) receiverUnit(cfg config.Config) {
	if !cfg.Receiver.Enabled {
		d.add("receiver", Skip, "", "the fallback share is off ([receiver] enabled = false)")
		return
	}
	if _, err := os.Stat(d.opt.SMBUnit); err == nil && !cfg.Receiver.ExternalSMBD {
		d.add("receiver", Warn, "set [receiver] external_smbd = true in "+d.configFile,
			"%s is installed but the daemon starts smbd itself: every restart of scanwarden.service kills that smbd and the scans in flight",
			d.opt.SMBUnit)
		return
	}
	d.add("receiver", OK, "", "fallback share \\\\%s\\%s, account %s, smbd %s", cfg.Receiver.Listen, cfg.Receiver.Share, cfg.Receiver.Account,
		map[bool]string{true: "in its own unit", false: "started by the daemon"}[cfg.Receiver.ExternalSMBD])
	// Who may connect, as the running daemon last set it (it follows the
	// registered MFPs).
	allow, warning, ok := receiver.ReadAllow(filepath.Join(absDataDir(cfg), "receiver"))
	switch {
	case !ok:
	case warning != "":
		d.add("receiver.allow", Warn, "register the MFPs or set [receiver] allow in "+d.configFile, "%s", warning)
	default:
		d.add("receiver.allow", OK, "", "the fallback share admits %s", strings.Join(allow, " "))
	}
	// Whether the daemon can tell that smbd no longer writes a scan: until
	// it can, it takes none (they wait in the inbox).
	switch why, ok := receiver.ReadIngestStopped(filepath.Join(absDataDir(cfg), "receiver")); {
	case !ok:
	case why != "":
		d.add("receiver.ingest", Fail, "fix what it names; the held scans are taken as soon as it works", "%s", receiver.IngestStoppedWarning(why))
	default:
		d.add("receiver.ingest", OK, "", "scans are taken from the inbox once nobody holds them open for writing (file leases work)")
	}
}
