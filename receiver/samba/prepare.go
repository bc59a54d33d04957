package samba

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// checkRootDir says whether dir and every folder above it belong to root
// and are writable by root alone (a sticky folder such as /tmp aside): the
// root side's own folder, where nothing the daemon plants can be.
func checkRootDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s: not an absolute path", dir)
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		var st unix.Stat_t
		err := unix.Lstat(p, &st)
		switch {
		case errors.Is(err, unix.ENOENT):
		case err != nil:
			return fmt.Errorf("stat %s: %w", p, err)
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return fmt.Errorf("%s is not a folder (a symbolic link?): smbd's folder must be root's own", p)
		case st.Uid != 0:
			return fmt.Errorf("%s belongs to uid %d: smbd's folder must be root's own", p, st.Uid)
		case st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
			return fmt.Errorf("%s is writable by others than root: smbd's folder must be root's own", p)
		}
		if p == "/" {
			return nil
		}
	}
}

// ShareSetup is what the root side of the installed layout needs.
type ShareSetup struct {
	// Config is the share as the root-owned config says; Dir is root's own
	// folder for smbd, Allow is ignored (it comes from AllowFile).
	Config Config
	// AllowFile is the daemon's allowlist (AllowFile(receiver dir)).
	AllowFile string
	// Owner is the daemon's Unix user: the owner AllowFile must have, the
	// share's force user, and the group that may read smbd's log.
	Owner string
	// Networks are the networks AllowFile may name (beyond single
	// addresses, the MFPs'): [receiver] allow of root's config and this
	// box's networks as root reads them — all the daemon takes networks
	// from (AllowFor). A file naming a network outside them is refused.
	Networks []netip.Prefix
}

// wideEntryError is a network in the daemon's allowlist that neither
// [receiver] allow nor this box's networks contain.
type wideEntryError struct {
	File  string
	Entry netip.Prefix
}

func (e *wideEntryError) Error() string {
	return fmt.Sprintf("%s: %s is a network that neither [receiver] allow nor this box's networks contain; the file is refused", e.File, e.Entry)
}

// checkNetworks says whether every network in allow lies inside one of
// nets; single addresses pass.
func checkNetworks(file string, allow, nets []netip.Prefix) error {
	for _, p := range allow {
		if p.IsSingleIP() {
			continue
		}
		inside := false
		for _, n := range nets {
			n = unmapPrefix(n.Masked())
			if n.Addr().BitLen() == p.Addr().BitLen() && n.Bits() <= p.Bits() && n.Contains(p.Addr()) {
				inside = true
				break
			}
		}
		if !inside {
			return &wideEntryError{File: file, Entry: p}
		}
	}
	return nil
}

// ShareResult says what PrepareShare did.
type ShareResult struct {
	Conf    string         // the smb.conf in place
	Allow   []netip.Prefix // the daemon's allowlist, taken (nil when refused)
	Changed bool           // smb.conf was rewritten
	// Refused is why the daemon's allowlist was not taken ("" when it
	// was): smb.conf carries the last good one.
	Refused string
}

// PrepareShare is the root side of the installed layout
// (`scanwarden receiver prepare`, scanwarden-smbd.service's ExecStartPre=
// and ExecReload=): it checks that Samba's VFS module is there, reads the
// daemon's allowlist as data (addresses, and networks only inside
// su.Networks), renders and validates (testparm) smb.conf in
// its own folder, and puts the MFP accounts in smbd's passdb. A refused
// allowlist (not an address, a network beyond su.Networks, a symlink, not
// the daemon's file) is logged
// naming what was wrong, and the smb.conf in place stays; only when there
// is none is it an error.
func PrepareShare(ctx context.Context, su ShareSetup, log *slog.Logger) (ShareResult, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := su.Config
	c.Allow = nil
	c.ForceUser = su.Owner
	if err := checkRootDir(c.Dir); err != nil {
		return ShareResult{}, err
	}
	owner, err := lookupUser(su.Owner)
	if err != nil {
		return ShareResult{}, err
	}
	// The rest of the config is root's own: wrong there is an error.
	probe := c
	probe.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	if err := probe.Validate(); err != nil {
		return ShareResult{}, err
	}
	allow, _, err := readAllowFile(su.AllowFile, rootOpener(owner.uid))
	if err == nil {
		err = checkNetworks(su.AllowFile, allow, su.Networks)
	}
	c.Allow = allow
	res := ShareResult{Conf: c.confPath()}
	if err := c.makeDirs(); err != nil {
		return res, err
	}
	applied := AppliedFile(c.Dir) // the last list taken, root's own copy: the daemon reads it
	if err != nil {
		res.Refused = err.Error()
		log.Error("the daemon's allowlist is refused; the share keeps the last good one", "file", su.AllowFile, "err", err)
		b, rerr := os.ReadFile(applied)
		if rerr != nil {
			return res, fmt.Errorf("the daemon's allowlist is refused and none was taken before: %w", err)
		}
		if c.Allow, rerr = parseAllow(applied, b); rerr != nil {
			return res, fmt.Errorf("the daemon's allowlist is refused (%v), and the last good one cannot be read: %w", err, rerr)
		}
		// why, for the daemon to name in its fault (data it reads, never
		// parses as more than a line)
		if werr := writeFileAtomic(RefusedFile(c.Dir), []byte(res.Refused+"\n"), 0o644); werr != nil {
			log.Warn("why the allowlist was refused is not kept for the daemon", "err", werr)
		}
	}
	if err := os.Chown(c.logDir(), 0, owner.gid); err != nil {
		return res, fmt.Errorf("smbd dirs: %w", err)
	}
	if err := FullAuditModule(ctx, c.Bin.Smbd); err != nil {
		return res, err
	}
	s, err := New(c)
	if err != nil {
		return res, err
	}
	if res.Changed, err = s.writeConfig(ctx); err != nil {
		return res, err
	}
	if res.Refused == "" {
		res.Allow = c.Allow
		if err := writeFileAtomic(applied, FormatAllow(c.Allow), 0o644); err != nil {
			return res, err
		}
		if err := os.Remove(RefusedFile(c.Dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("remove %s: %w", RefusedFile(c.Dir), err)
		}
	}
	if err := s.setAccounts(ctx); err != nil {
		return res, err
	}
	return res, nil
}

type unixUser struct{ uid, gid int }

func lookupUser(name string) (unixUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return unixUser{}, fmt.Errorf("the daemon's user %q: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return unixUser{}, fmt.Errorf("the daemon's user %q: uid %q gid %q", name, u.Uid, u.Gid)
	}
	return unixUser{uid, gid}, nil
}

func writeFileAtomic(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".new"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ErrVFSModuleMissing says Samba's full_audit VFS module, which the share
// loads (it tells the watcher which MFP wrote a file and when its session
// ended), is not installed: smbd would refuse every tree connect
// (NT_STATUS_BAD_NETWORK_NAME, "vfs_init failed for service").
var ErrVFSModuleMissing = errors.New("the full_audit VFS module of Samba is not installed, so the fallback share refuses every MFP (vfs_init failed): apt-get install samba-vfs-modules")

// FullAuditModule checks that the smbd at path (zero: found as New
// does) has its full_audit module: it asks smbd for its MODULESDIR
// (smbd -b) and looks for vfs/full_audit.so there.
func FullAuditModule(ctx context.Context, smbd string) error {
	b, err := Config{Bin: Bin{Smbd: smbd}}.bin()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, b.Smbd, "-b").Output()
	if err != nil {
		return fmt.Errorf("%s -b: %w", b.Smbd, err)
	}
	dir := ""
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "MODULESDIR:"); ok {
			dir = strings.TrimSpace(v)
		}
	}
	if dir == "" {
		return fmt.Errorf("%s -b names no MODULESDIR", b.Smbd)
	}
	mod := filepath.Join(dir, "vfs", "full_audit.so")
	if _, err := os.Stat(mod); err != nil {
		return fmt.Errorf("%s: %w", mod, ErrVFSModuleMissing)
	}
	return nil
}
