package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

// dataDirCheck: the data dir exists (or will be made), the daemon's user
// can write it, the database belongs to that user, and there is room.
type dataDirCheck struct{ *doc }

func (c dataDirCheck) run(context.Context) {
	dir := absDataDir(c.cfg)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.add("data_dir", Warn, fmt.Sprintf("nothing to do if this is a new install; else restore it from the backup (%s and the key)", dir),
			"%s does not exist yet: the daemon creates it at its first start", dir)
		return
	case err != nil:
		c.add("data_dir", Fail, "check the path in data_dir", "%s: %v", dir, err)
		return
	case !st.IsDir():
		c.add("data_dir", Fail, "point data_dir at a folder", "%s is not a folder", dir)
		return
	}
	sts, ok := c.dbFiles(dir)
	if ok && c.writable(dir, st, sts) {
		c.room(dir)
	}
}

// dbFileNames are the database's files in the data dir, in the order
// they are told.
func dbFileNames() []string {
	return []string{store.DefaultFile, store.DefaultFile + "-wal", store.DefaultFile + "-shm"}
}

// dbFiles reads the database and its -wal and -shm in dir, those that
// exist: each must be a plain file (false, reported, when one is not).
func (c dataDirCheck) dbFiles(dir string) (map[string]unix.Stat_t, bool) {
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
			c.add("data_dir", Fail, "remove "+filepath.Join(dir, f)+" (the database and its -wal and -shm are plain files of the daemon's; restore the database from the backup)",
				"%v", err)
			return nil, false
		}
		sts[f] = fst
	}
	return sts, true
}

// writable: the daemon's user can write dir (st) and owns the
// database files in it (sts). As root, judged by owner and mode; else by
// creating a file. False, reported, when it cannot.
func (c dataDirCheck) writable(dir string, st fs.FileInfo, sts map[string]unix.Stat_t) bool {
	uid, _ := c.serviceIDs()
	own := func(p string) string {
		return fmt.Sprintf("chown -R %s: %s", c.opt.ServiceUser, p)
	}
	if os.Geteuid() != 0 || uid < 0 {
		f, err := os.CreateTemp(dir, ".doctor-*")
		if err != nil {
			c.add("data_dir", Fail, own(dir), "%s is not writable: %v", dir, err)
			return false
		}
		f.Close()
		os.Remove(f.Name())
		return true
	}
	// root can write anywhere: judge what the daemon's user can do
	s := st.Sys().(*syscall.Stat_t)
	if int(s.Uid) != uid || st.Mode().Perm()&0o700 != 0o700 {
		c.add("data_dir", Fail, own(dir)+" && chmod 750 "+dir,
			"%s belongs to uid %d mode %04o: user %s (uid %d) cannot write it", dir, s.Uid, st.Mode().Perm(), c.opt.ServiceUser, uid)
		return false
	}
	var foreign []string
	for _, f := range dbFileNames() {
		if fst, ok := sts[f]; ok && int(fst.Uid) != uid {
			foreign = append(foreign, fmt.Sprintf("%s (uid %d)", f, fst.Uid))
		}
	}
	if len(foreign) > 0 {
		c.add("data_dir", Fail, own(dir),
			"in %s, %s belong to another user than %s: the daemon cannot open its database (a command run as root made them?)",
			dir, strings.Join(foreign, ", "), c.opt.ServiceUser)
		return false
	}
	return true
}

// room reports the writable data dir with its free space: a
// warning below minFree.
func (c dataDirCheck) room(dir string) {
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(dir, &sfs); err == nil {
		free := sfs.Bavail * uint64(sfs.Bsize)
		if free < minFree {
			c.add("data_dir", Warn, "free space on that file system (held scans wait here while a destination is broken)",
				"%s is writable by %s, but only %s are free", dir, c.opt.ServiceUser, size(free))
			return
		}
		c.add("data_dir", OK, "", "%s is writable by %s, %s free", dir, c.opt.ServiceUser, size(free))
		return
	}
	c.add("data_dir", OK, "", "%s is writable by %s", dir, c.opt.ServiceUser)
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

// keyCheck: the sealing key is present, mode 0600 (or stricter), a key,
// and the one the data dir was sealed with. loaded is its path once it
// loads ("" otherwise), for the checks that unseal with it.
type keyCheck struct {
	*doc
	loaded string
}

// path is where the daemon finds its sealing key: --key-file,
// $SCANWARDEN_KEY_FILE, $CREDENTIALS_DIRECTORY/secret.key, the key next to
// the config file (the Debian package's /etc/scanwarden/secret.key, which
// the unit hands over with LoadCredential=), else in the data dir.
func (c *keyCheck) path() string {
	cfg := c.cfg
	if c.opt.KeyFile != "" {
		return c.opt.KeyFile
	}
	if c.opt.Getenv(seal.EnvKeyFile) == "" && c.opt.Getenv("CREDENTIALS_DIRECTORY") == "" && c.configFile != "" {
		p := filepath.Join(filepath.Dir(c.configFile), seal.FileName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return store.KeyFile("", c.opt.Getenv, absDataDir(cfg))
}

func (c *keyCheck) run(context.Context) {
	c.loaded = c.load()
}

// load checks the key and returns its path when it loads.
func (c *keyCheck) load() string {
	cfg := c.cfg
	p := c.path()
	db := filepath.Join(absDataDir(cfg), store.DefaultFile)
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := lstatData(absDataDir(cfg), store.DefaultFile); err == nil {
			c.add("key", Fail, "restore the key file from your backup to "+p+" (mode 0600): without it the sealed passwords cannot be read",
				"no key file at %s, but %s exists", p, db)
		} else {
			c.add("key", Warn, "nothing to do on a new install (the Debian package makes "+installed.KeyFile+")",
				"no key file at %s yet: it is made at the first start", p)
		}
		return ""
	}
	if err != nil {
		c.add("key", Fail, "run doctor as root, or check the path", "key file %s: %v", p, err)
		return ""
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		c.add("key", Fail, "chmod 600 "+p, "key file %s has mode %04o: others can read the key", p, perm)
		return ""
	}
	k, err := seal.Load(p)
	if errors.Is(err, fs.ErrPermission) {
		c.add("key", Warn, "run doctor as root (sudo scanwarden doctor) to check the key itself",
			"%s is there with mode %04o, but this user cannot read it", p, st.Mode().Perm())
		return ""
	}
	if err != nil {
		c.add("key", Fail, "restore the key file from your backup", "%v", err)
		return ""
	}
	if _, err := lstatData(absDataDir(cfg), store.DefaultFile); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.opt.Timeout)
		defer cancel()
		if st, err := store.OpenReadOnly(ctx, db); err == nil {
			_, uerr := st.UnlockKey(ctx, p)
			st.Close()
			var ke *store.KeyError
			if errors.As(uerr, &ke) {
				c.add("key", Fail, "put back the key this data dir was sealed with (your backup of "+p+")", "%v", uerr)
				return ""
			}
		}
	}
	c.add("key", OK, "", "%s (mode %04o, key id %s)", p, st.Mode().Perm(), k.ID())
	return p
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

// filesCheck: every file the config names can be read by the daemon's
// user, and the secret ones by nobody else.
type filesCheck struct{ *doc }

func (c filesCheck) run(context.Context) {
	fs := configFiles(c.cfg)
	if len(fs) == 0 {
		return
	}
	u, err := user.Lookup(c.opt.ServiceUser)
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
			bad = append(bad, fmt.Sprintf("%s %s (uid %d gid %d mode %04o) is not readable by %s", f.key, f.path, s.Uid, s.Gid, perm, c.opt.ServiceUser))
			if fix == "" {
				fix = fmt.Sprintf("chgrp %s %s && chmod 640 %s", c.opt.ServiceUser, f.path, f.path)
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
		c.add("files", Fail, fix, "%s", strings.Join(append(bad, loose...), "; "))
	case len(loose) > 0:
		c.add("files", Warn, "chmod o-r on it (owner root, group "+c.opt.ServiceUser+", mode 640)", "%s", strings.Join(loose, "; "))
	default:
		c.add("files", OK, "", "%s readable by %s (the secret ones by no other user)", strings.Join(ok, ", "), c.opt.ServiceUser)
	}
}
