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
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/installed"
	"github.com/scanwarden/scanwarden/internal/safefile"
	"github.com/scanwarden/scanwarden/seal"
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
	sts, ok := d.dbFiles(dir)
	if ok && d.dataDirWritable(dir, st, sts) {
		d.dataDirRoom(dir)
	}
}

// dbFileNames are the database's files in the data dir, in the order
// they are told.
func dbFileNames() []string {
	return []string{store.DefaultFile, store.DefaultFile + "-wal", store.DefaultFile + "-shm"}
}

// dbFiles reads the database and its -wal and -shm in dir, those that
// exist: each must be a plain file (false, reported, when one is not).
func (d *doc) dbFiles(dir string) (map[string]unix.Stat_t, bool) {
	sts := map[string]unix.Stat_t{}
	for _, f := range dbFileNames() {
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
			return nil, false
		}
		sts[f] = fst
	}
	return sts, true
}

// dataDirWritable: the daemon's user can write dir (st) and owns the
// database files in it (sts). As root, judged by owner and mode; else by
// creating a file. False, reported, when it cannot.
func (d *doc) dataDirWritable(dir string, st fs.FileInfo, sts map[string]unix.Stat_t) bool {
	uid, _ := d.serviceIDs()
	own := func(p string) string {
		return fmt.Sprintf("chown -R %s: %s", d.opt.ServiceUser, p)
	}
	if os.Geteuid() != 0 || uid < 0 {
		f, err := os.CreateTemp(dir, ".doctor-*")
		if err != nil {
			d.add("data_dir", Fail, own(dir), "%s is not writable: %v", dir, err)
			return false
		}
		f.Close()
		os.Remove(f.Name())
		return true
	}
	// root can write anywhere: judge what the daemon's user can do
	s := st.Sys().(*syscall.Stat_t)
	if int(s.Uid) != uid || st.Mode().Perm()&0o700 != 0o700 {
		d.add("data_dir", Fail, own(dir)+" && chmod 750 "+dir,
			"%s belongs to uid %d mode %04o: user %s (uid %d) cannot write it", dir, s.Uid, st.Mode().Perm(), d.opt.ServiceUser, uid)
		return false
	}
	var foreign []string
	for _, f := range dbFileNames() {
		if fst, ok := sts[f]; ok && int(fst.Uid) != uid {
			foreign = append(foreign, fmt.Sprintf("%s (uid %d)", f, fst.Uid))
		}
	}
	if len(foreign) > 0 {
		d.add("data_dir", Fail, own(dir),
			"in %s, %s belong to another user than %s: the daemon cannot open its database (a command run as root made them?)",
			dir, strings.Join(foreign, ", "), d.opt.ServiceUser)
		return false
	}
	return true
}

// dataDirRoom reports the writable data dir with its free space: a
// warning below minFree.
func (d *doc) dataDirRoom(dir string) {
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

// configFile is a file the config names, under its key.
type configFile struct {
	key, path string
	secret    bool
}

// configFiles are the files cfg names (the receiver's only when it is
// enabled).
func configFiles(cfg config.Config) []configFile {
	var fs []configFile
	add := func(key, path string, secret bool) {
		if path != "" {
			fs = append(fs, configFile{key, path, secret})
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
	return fs
}

// userIDs are u's uid and the groups it is in (its primary one too).
func userIDs(u *user.User) (int, map[int]bool) {
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
	return uid, groups
}

// files: every file the config names can be read by the daemon's user, and
// the secret ones by nobody else.
func (d *doc) files(cfg config.Config) {
	fs := configFiles(cfg)
	if len(fs) == 0 {
		return
	}
	u, err := user.Lookup(d.opt.ServiceUser)
	if err != nil {
		return
	}
	uid, groups := userIDs(u)
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
