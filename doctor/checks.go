package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/receiver/samba"

	"github.com/scanwarden/scanwarden/ad"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/daemon"
	"github.com/scanwarden/scanwarden/internal/safefile"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/snmp"
	"github.com/scanwarden/scanwarden/store"
	"golang.org/x/sys/unix"
)

// lstatData is what name is in the data dir dir, looked at below the
// folder's fd and not followed when a link: the daemon's user owns dir.
func lstatData(dir, name string) (unix.Stat_t, error) {
	d, err := safefile.OpenDir(dir)
	if err != nil {
		return unix.Stat_t{}, err
	}
	defer d.Close()
	return d.Lstat(name)
}

// minFree is the free space below which the data dir is a warning: held
// scans and the database grow there.
const minFree = 1 << 30

// dataDir: exists (or will be made), the daemon's user can write it, the
// database belongs to that user, and there is room.
func (d *doc) dataDir(cfg config.Config) {
	dir := absDataDir(cfg)
	uid, gid := d.serviceIDs()
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add("data_dir", Warn, fmt.Sprintf("nothing to do if this is a new install; else restore it from the backup (%s and the key)", dir),
			"%s does not exist yet: the daemon creates it at its first start", dir)
		return
	case err != nil:
		d.add("data_dir", Fail, "check the path in data_dir", "%s: %v", dir, err)
		return
	case !st.IsDir():
		d.add("data_dir", Fail, "point data_dir at a folder", "%s is not a folder", dir)
		return
	}
	own := func(p string) string {
		return fmt.Sprintf("chown -R %s: %s", d.opt.ServiceUser, p)
	}
	sts := map[string]unix.Stat_t{}
	for _, f := range []string{store.DefaultFile, store.DefaultFile + "-wal", store.DefaultFile + "-shm"} {
		fst, err := lstatData(dir, f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil {
			err = safefile.Regular(filepath.Join(dir, f), fst)
		}
		if err != nil {
			d.add("data_dir", Fail, "remove "+filepath.Join(dir, f)+" (the database and its -wal and -shm are plain files of the daemon's; restore the database from the backup)",
				"%v", err)
			return
		}
		sts[f] = fst
	}
	if os.Geteuid() == 0 && uid >= 0 {
		// root can write anywhere: judge what the daemon's user can do
		s := st.Sys().(*syscall.Stat_t)
		if int(s.Uid) != uid || st.Mode().Perm()&0o700 != 0o700 {
			d.add("data_dir", Fail, own(dir)+" && chmod 750 "+dir,
				"%s belongs to uid %d mode %04o: user %s (uid %d) cannot write it", dir, s.Uid, st.Mode().Perm(), d.opt.ServiceUser, uid)
			return
		}
		var foreign []string
		for _, f := range []string{store.DefaultFile, store.DefaultFile + "-wal", store.DefaultFile + "-shm"} {
			if fst, ok := sts[f]; ok && int(fst.Uid) != uid {
				foreign = append(foreign, fmt.Sprintf("%s (uid %d)", f, fst.Uid))
			}
		}
		if len(foreign) > 0 {
			d.add("data_dir", Fail, own(dir),
				"in %s, %s belong to another user than %s: the daemon cannot open its database (a command run as root made them?)",
				dir, strings.Join(foreign, ", "), d.opt.ServiceUser)
			return
		}
		_ = gid
	} else {
		f, err := os.CreateTemp(dir, ".doctor-*")
		if err != nil {
			d.add("data_dir", Fail, own(dir), "%s is not writable: %v", dir, err)
			return
		}
		f.Close()
		os.Remove(f.Name())
	}
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(dir, &sfs); err == nil {
		free := sfs.Bavail * uint64(sfs.Bsize)
		if free < minFree {
			d.add("data_dir", Warn, "free space on that file system (held scans wait here while a destination is broken)",
				"%s is writable by %s, but only %s are free", dir, d.opt.ServiceUser, size(free))
			return
		}
		d.add("data_dir", OK, "", "%s is writable by %s, %s free", dir, d.opt.ServiceUser, size(free))
		return
	}
	d.add("data_dir", OK, "", "%s is writable by %s", dir, d.opt.ServiceUser)
}

func size(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", b>>10)
}

// keyPath is where the daemon finds its sealing key: --key-file,
// $SCANWARDEN_KEY_FILE, $CREDENTIALS_DIRECTORY/secret.key, the key next to
// the config file (the Debian package's /etc/scanwarden/secret.key, which
// the unit hands over with LoadCredential=), else in the data dir.
func (d *doc) keyPath(cfg config.Config) string {
	if d.opt.KeyFile != "" {
		return d.opt.KeyFile
	}
	if d.opt.Getenv(seal.EnvKeyFile) == "" && d.opt.Getenv("CREDENTIALS_DIRECTORY") == "" && d.configFile != "" {
		p := filepath.Join(filepath.Dir(d.configFile), seal.FileName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return store.KeyFile("", d.opt.Getenv, absDataDir(cfg))
}

// key: present, mode 0600 (or stricter), a key, and the one the data dir
// was sealed with. Returns its path when it loads.
func (d *doc) key(cfg config.Config) string {
	p := d.keyPath(cfg)
	db := filepath.Join(absDataDir(cfg), store.DefaultFile)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := lstatData(absDataDir(cfg), store.DefaultFile); err == nil {
			d.add("key", Fail, "restore the key file from your backup to "+p+" (mode 0600): without it the sealed passwords cannot be read",
				"no key file at %s, but %s exists", p, db)
		} else {
			d.add("key", Warn, "nothing to do on a new install (the Debian package makes "+installed.KeyFile+")",
				"no key file at %s yet: it is made at the first start", p)
		}
		return ""
	}
	if err != nil {
		d.add("key", Fail, "run doctor as root, or check the path", "key file %s: %v", p, err)
		return ""
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		d.add("key", Fail, "chmod 600 "+p, "key file %s has mode %04o: others can read the key", p, perm)
		return ""
	}
	k, err := seal.Load(p)
	if errors.Is(err, fs.ErrPermission) {
		d.add("key", Warn, "run doctor as root (sudo scanwarden doctor) to check the key itself",
			"%s is there with mode %04o, but this user cannot read it", p, st.Mode().Perm())
		return ""
	}
	if err != nil {
		d.add("key", Fail, "restore the key file from your backup", "%v", err)
		return ""
	}
	if _, err := lstatData(absDataDir(cfg), store.DefaultFile); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), d.opt.Timeout)
		defer cancel()
		if st, err := store.OpenReadOnly(ctx, db); err == nil {
			_, uerr := st.UnlockKey(ctx, p)
			st.Close()
			var ke *store.KeyError
			if errors.As(uerr, &ke) {
				d.add("key", Fail, "put back the key this data dir was sealed with (your backup of "+p+")", "%v", uerr)
				return ""
			}
		}
	}
	d.add("key", OK, "", "%s (mode %04o, key id %s)", p, st.Mode().Perm(), k.ID())
	return p
}

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

// daemonUp asks the daemon's /healthz on its listen address: over HTTPS
// when the page is served so, trusting exactly the certificate doctor read
// (cert; nil: not checked — /healthz carries no secret).
func (d *doc) daemonUp(ctx context.Context, cfg config.Config, cert *x509.Certificate) {
	host, _, port, ok := cfg.WebListen()
	if !ok {
		return
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	scheme := "http"
	client := http.DefaultClient
	if cfg.WebTLS() {
		scheme = "https"
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			InsecureSkipVerify: true, // the page's own certificate, pinned below when doctor could read it
			VerifyConnection: func(cs tls.ConnectionState) error {
				if cert != nil && (len(cs.PeerCertificates) == 0 || !cs.PeerCertificates[0].Equal(cert)) {
					return errors.New("the daemon serves another certificate than the one on disk (restart it after replacing the files)")
				}
				return nil
			}}}}
	}
	url := scheme + "://" + net.JoinHostPort(host, port) + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, d.opt.Timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err != nil && strings.Contains(err.Error(), "another certificate") {
		d.add("daemon", Warn, "systemctl restart scanwarden", "%s: %v", url, err)
		return
	}
	if err != nil {
		d.add("daemon", Warn, "systemctl start scanwarden; journalctl -u scanwarden says why it stopped",
			"nothing answers %s: the daemon is not running (or listens elsewhere)", url)
		return
	}
	defer resp.Body.Close()
	b := make([]byte, 200)
	n, _ := resp.Body.Read(b)
	body := strings.TrimSpace(string(b[:n]))
	switch {
	case resp.StatusCode != http.StatusOK:
		d.add("daemon", Fail, "journalctl -u scanwarden", "%s answered %s", url, resp.Status)
	case strings.Contains(body, "fault"):
		d.add("daemon", Warn, "the status page and journalctl -u scanwarden name the part that is down", "the daemon answers %s: %s", url, body)
	default:
		d.add("daemon", OK, "", "the daemon answers %s: %s", url, body)
	}
}

// ad: the DC answers and the service account binds; then the clock.
func (d *doc) ad(ctx context.Context, cfg config.Config) {
	if cfg.AD.URL == "" {
		d.add("ad", Skip, "", "no [ad] url configured")
		return
	}
	dir, err := ad.New(ad.Config{URL: cfg.AD.URL, BindUser: cfg.AD.BindUser, Password: cfg.AD.Password,
		CAFile: cfg.AD.CA, AllowPlain: cfg.AD.InsecurePlain, Timeout: d.opt.Timeout})
	if err != nil {
		d.add("ad", Fail, "fix [ad] in "+d.configFile, "%v", err)
		return
	}
	t0 := d.opt.Now()
	dc, err := dir.Probe(ctx)
	t1 := d.opt.Now()
	if err != nil {
		d.add("ad", Fail, adFix(err), "%v", err)
		d.add("ad.clock", Skip, "", "the DC did not answer")
		return
	}
	d.add("ad", OK, "", "DC %s (%s) answered over %s, bound as %s", dc.Host, dc.Addr, dc.Transport, cfg.AD.BindUser)
	if dc.Time.IsZero() {
		d.add("ad.clock", Skip, "", "the DC did not give its time (RootDSE currentTime)")
		return
	}
	// currentTime is whole seconds: compare with the middle of the read,
	// and allow that second.
	mid := t0.Add(t1.Sub(t0) / 2)
	skew := dc.Time.Add(500 * time.Millisecond).Sub(mid)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	dir2 := "ahead of"
	if skew < 0 {
		dir2 = "behind"
	}
	fix := "sync this box's clock with the DC: timedatectl set-ntp true, and point systemd-timesyncd (NTP=) at " + dc.Host
	switch {
	case abs <= 2*time.Second:
		d.add("ad.clock", OK, "", "clock within %v of the DC's", abs.Round(time.Second))
	case abs <= SkewWarn:
		d.add("ad.clock", OK, "", "the DC's clock is %v %s this box's (Kerberos allows 5 min)", abs.Round(time.Second), dir2)
	case abs <= SkewFail:
		d.add("ad.clock", Warn, fix, "the DC's clock is %v %s this box's: logon-hours and lockout times read off by that much", abs.Round(time.Second), dir2)
	default:
		d.add("ad.clock", Fail, fix, "the DC's clock is %v %s this box's: beyond Kerberos' 5 minutes, and logon hours and lockout windows are misjudged",
			abs.Round(time.Second), dir2)
	}
}

func adFix(err error) string {
	var be *ad.BindError
	switch {
	case errors.As(err, &be):
		return "check [ad] bind_user and the password in password_file (AD says: " + string(be.Cause) + ")"
	case strings.Contains(err.Error(), "x509") || strings.Contains(err.Error(), "TLS"):
		return "give the DC's CA in [ad] ca (PEM), or fix the DC's certificate name"
	}
	return "check [ad] url, and that this box reaches the DC on 636 (ldaps) or 389 (StartTLS)"
}

// snmp: each registered device answers (read from the database without
// changing it). Devices come from the registry; nothing to do without any.
func (d *doc) snmp(ctx context.Context, cfg config.Config, keyPath string) {
	devs, ok := d.snmpDevices(ctx, cfg, keyPath)
	if !ok {
		return
	}
	var jobs []snmpJob
	for _, dev := range devs {
		if dev.Address == "" {
			continue
		}
		t, err := daemon.DeviceTarget(dev, cfg)
		if err != nil {
			d.add("snmp."+dev.Name, Fail, "correct the device's address in the registry", "address %q: %v", dev.Address, err)
			continue
		}
		jobs = append(jobs, snmpJob{dev.Name, t})
	}
	if len(jobs) == 0 {
		d.add("snmp", Skip, "", "no device with an address in the registry")
		return
	}
	if len(jobs) > d.opt.MaxDevices {
		d.add("snmp", Skip, "", "%d devices: the first %d are asked", len(jobs), d.opt.MaxDevices)
		jobs = jobs[:d.opt.MaxDevices]
	}
	d.rep.Checks = append(d.rep.Checks, d.probeDevices(ctx, jobs)...)
}

// snmpDevices reads the registered devices, their SNMP credentials
// unsealed, from the database opened read-only; ok is false (the reason
// added as the "snmp" check) when they cannot be read.
func (d *doc) snmpDevices(ctx context.Context, cfg config.Config, keyPath string) (devs []registry.Device, ok bool) {
	db := filepath.Join(absDataDir(cfg), store.DefaultFile)
	if _, err := lstatData(absDataDir(cfg), store.DefaultFile); err != nil {
		d.add("snmp", Skip, "", "no database yet: no registered device to ask")
		return nil, false
	}
	if keyPath == "" {
		d.add("snmp", Skip, "fix the key first", "the devices' SNMP credentials are sealed and the key did not load")
		return nil, false
	}
	st, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		d.add("snmp", Skip, "run doctor as root", "cannot read the registry: %v", err)
		return nil, false
	}
	defer st.Close()
	if _, err := st.UnlockKey(ctx, keyPath); err != nil {
		d.add("snmp", Skip, "", "cannot open the devices' credentials: %v", err)
		return nil, false
	}
	if devs, err = st.Devices(ctx); err != nil {
		d.add("snmp", Skip, "", "cannot read the registry: %v", err)
		return nil, false
	}
	return devs, true
}

// snmpJob is one device doctor asks.
type snmpJob struct {
	name string
	t    snmp.Target
}

// probeDevices asks the devices, 8 at a time, each within the timeout:
// one check each, in the order of jobs.
func (d *doc) probeDevices(ctx context.Context, jobs []snmpJob) []Check {
	results := make([]Check, len(jobs))
	sem := make(chan struct{}, 8)
	done := make(chan struct{})
	for i, j := range jobs {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem; done <- struct{}{} }()
			results[i] = d.probeDevice(ctx, j)
		}()
	}
	for range jobs {
		<-done
	}
	return results
}

// probeDevice asks one device for its identity and status.
func (d *doc) probeDevice(ctx context.Context, j snmpJob) Check {
	pctx, cancel := context.WithTimeout(ctx, d.opt.Timeout)
	defer cancel()
	res, err := snmp.Probe(pctx, j.t, snmp.DefaultRules(snmp.DefaultCodeBook()), snmp.ProbeOptions{})
	id := "snmp." + j.name
	switch {
	case err != nil:
		return Check{id, Fail, fmt.Sprintf("%s: %v", j.t.Addr(), err), "correct the device's SNMP settings in the registry"}
	case !res.Answered:
		return Check{id, Fail, fmt.Sprintf("%s did not answer SNMP %s: %s", j.t.Addr(), j.t.Version, res.Error),
			"on the MFP (Command Center RX → Network → Protocol) enable SNMP and match the community or v3 user; let UDP 161 through"}
	}
	return Check{id, OK, fmt.Sprintf("%s answered SNMP %s (%s %s)", j.t.Addr(), j.t.Version, res.Model, res.Serial), ""}
}

// portLabel says what a port is for.
func portLabel(port int) string {
	switch port {
	case 445:
		return "SMB, the fallback share"
	case 139:
		return "SMB over NetBIOS, the fallback share for old MFPs"
	case 162:
		return "SNMP traps"
	}
	return "listener"
}

// files: every file the config names can be read by the daemon's user, and
// the secret ones by nobody else.
func (d *doc) files(cfg config.Config) {
	type named struct {
		key, path string
		secret    bool
	}
	var fs []named
	add := func(key, path string, secret bool) {
		if path != "" {
			fs = append(fs, named{key, path, secret})
		}
	}
	add("ad.password_file", cfg.AD.PasswordFile, true)
	add("ad.ca", cfg.AD.CA, false)
	add("snmp.community_file", cfg.SNMP.CommunityFile, true)
	add("snmp.trap_community_file", cfg.SNMP.TrapCommunityFile, true)
	add("snmp.rules_file", cfg.SNMP.RulesFile, false)
	add("notify.webhook_secret_file", cfg.Notify.WebhookSecretFile, true)
	add("notify.smtp_password_file", cfg.Notify.SMTPPasswordFile, true)
	if cfg.Receiver.Enabled {
		add("receiver.password_file", cfg.Receiver.PasswordFile, true)
	}
	if len(fs) == 0 {
		return
	}
	u, err := user.Lookup(d.opt.ServiceUser)
	if err != nil {
		return
	}
	uid, _ := strconv.Atoi(u.Uid)
	groups := map[int]bool{}
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			n, _ := strconv.Atoi(g)
			groups[n] = true
		}
	}
	gid, _ := strconv.Atoi(u.Gid)
	groups[gid] = true
	var bad, loose, ok []string
	fix := ""
	for _, f := range fs {
		st, err := os.Stat(f.path)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s %s: %v", f.key, f.path, err))
			continue
		}
		s := st.Sys().(*syscall.Stat_t)
		perm := st.Mode().Perm()
		readable := (int(s.Uid) == uid && perm&0o400 != 0) || (groups[int(s.Gid)] && perm&0o040 != 0) || perm&0o004 != 0 || uid == 0
		switch {
		case !readable:
			bad = append(bad, fmt.Sprintf("%s %s (uid %d gid %d mode %04o) is not readable by %s", f.key, f.path, s.Uid, s.Gid, perm, d.opt.ServiceUser))
			if fix == "" {
				fix = fmt.Sprintf("chgrp %s %s && chmod 640 %s", d.opt.ServiceUser, f.path, f.path)
			}
		case f.secret && perm&0o004 != 0:
			loose = append(loose, fmt.Sprintf("%s %s (mode %04o) is readable by every user", f.key, f.path, perm))
		default:
			ok = append(ok, f.key)
		}
	}
	switch {
	case len(bad) > 0:
		if fix == "" {
			fix = "create the file or correct the path in the config"
		}
		d.add("files", Fail, fix, "%s", strings.Join(append(bad, loose...), "; "))
	case len(loose) > 0:
		d.add("files", Warn, "chmod o-r on it (owner root, group "+d.opt.ServiceUser+", mode 640)", "%s", strings.Join(loose, "; "))
	default:
		d.add("files", OK, "", "%s readable by %s (the secret ones by no other user)", strings.Join(ok, ", "), d.opt.ServiceUser)
	}
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
