package receiver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// The installed layout splits the fallback share across a privilege
// boundary. The daemon (user scanwarden) hands root one piece of DATA: the
// share's allowlist, one address or network a line, in AllowFile under its
// receiver dir. Root (PrepareShare, run by scanwarden-smbd.service before
// smbd starts and at every reload) renders smb.conf itself from the
// root-owned config and that list, validated entry by entry, into a folder
// of its own; it runs testparm and smbpasswd only there. Root never follows
// a symlink the daemon could plant: the list is opened one path component
// at a time without following links, and each component must belong to
// root or the daemon.

// AllowFile is the allowlist file in a receiver data dir, the one thing the
// daemon writes for root (scanwarden-smbd-reload.path watches it).
func AllowFile(dataDir string) string { return filepath.Join(dataDir, "smbd-allow") }

// Bounds of the allowlist file: more is not an allowlist.
const (
	maxAllowBytes   = 64 << 10
	maxAllowEntries = 1024
)

// FormatAllow renders an allowlist as AllowFile's text.
func FormatAllow(allow []netip.Prefix) []byte {
	var b bytes.Buffer
	b.WriteString("# The fallback share's allowlist, written by scanwarden for scanwarden-smbd.service.\n")
	b.WriteString("# Addresses and networks, one a line; root refuses anything else.\n")
	for _, p := range allow {
		b.WriteString(p.Masked().String())
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// WriteAllowFile puts the allowlist in place atomically (the daemon's
// side) and says whether it changed. An empty list is refused: smb.conf
// would then admit any address.
func WriteAllowFile(path string, allow []netip.Prefix) (bool, error) {
	if len(allow) == 0 {
		return false, badConfig("allow", "", "empty: the share would admit any address")
	}
	for _, p := range allow {
		if !p.IsValid() {
			return false, badConfig("allow", p.String(), "must be an address or a network (CIDR)")
		}
	}
	b := FormatAllow(allow)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return false, nil
	}
	tmp := path + ".new"
	os.Remove(tmp)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

// AllowEntryError is a line of the allowlist file that is not an address
// or a network.
type AllowEntryError struct {
	File string
	Line int
	Text string // as found (at most 80 bytes)
}

func (e *AllowEntryError) Error() string {
	return fmt.Sprintf("%s line %d: %q is not an address or a network (CIDR); the file is refused", e.File, e.Line, e.Text)
}

// ParseAllow reads AllowFile's text: addresses and networks, one a line;
// blank lines and lines starting with '#' are skipped. The first other line
// fails the whole file.
func ParseAllow(name string, b []byte) ([]netip.Prefix, error) {
	if len(b) > maxAllowBytes {
		return nil, fmt.Errorf("%s: %d bytes, more than an allowlist (%d)", name, len(b), maxAllowBytes)
	}
	var out []netip.Prefix
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxAllowBytes)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p, err := ParseAllowEntry(l)
		if err != nil {
			if len(l) > 80 {
				l = l[:80]
			}
			return nil, &AllowEntryError{File: name, Line: n, Text: l}
		}
		if out = append(out, p); len(out) > maxAllowEntries {
			return nil, fmt.Errorf("%s: more than %d entries", name, maxAllowEntries)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no address: the share would admit any address; the file is refused", name)
	}
	return out, nil
}

// openNoFollow opens path for reading the way root must open a file the
// daemon may have placed: from "/", one component at a time, never
// following a symbolic link (O_NOFOLLOW at every step), each directory owned
// by root or owner and writable by no one else (unless sticky, as /tmp), the
// file itself a regular file of owner's with one link (no hard link to a
// file of root's), opened without blocking (no FIFO).
func openNoFollow(path string, owner int) (*os.File, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s: not an absolute path", path)
	}
	parts := strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/")
	dirfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /: %w", err)
	}
	sofar := ""
	for i, name := range parts {
		sofar += "/" + name
		last := i == len(parts)-1
		flags := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
		}
		fd, err := unix.Openat(dirfd, name, flags, 0)
		unix.Close(dirfd)
		if err != nil {
			var st unix.Stat_t
			if (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR)) && unix.Lstat(sofar, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				return nil, fmt.Errorf("%s is a symbolic link: not followed", sofar)
			}
			return nil, fmt.Errorf("open %s: %w", sofar, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("stat %s: %w", sofar, err)
		}
		uid := int(st.Uid)
		switch {
		case uid != 0 && uid != owner:
			err = fmt.Errorf("%s belongs to uid %d, neither root nor the daemon's user (uid %d)", sofar, uid, owner)
		case !last && st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
			err = fmt.Errorf("%s is writable by others than its owner", sofar)
		case last && st.Mode&unix.S_IFMT != unix.S_IFREG:
			err = fmt.Errorf("%s is not a regular file", sofar)
		case last && uid != owner:
			err = fmt.Errorf("%s belongs to uid %d, not the daemon's user (uid %d)", sofar, uid, owner)
		case last && st.Nlink != 1:
			err = fmt.Errorf("%s has %d hard links", sofar, st.Nlink)
		}
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		dirfd = fd
	}
	return os.NewFile(uintptr(dirfd), path), nil
}

// ReadAllowFile reads and validates the daemon's allowlist as root:
// openNoFollow, then ParseAllow.
func ReadAllowFile(path string, owner int) ([]netip.Prefix, error) {
	f, err := openNoFollow(path, owner)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAllowBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return ParseAllow(path, b)
}

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
	// Samba is the share as the root-owned config says; Dir is root's own
	// folder for smbd, Allow is ignored (it comes from AllowFile).
	Samba SambaConfig
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

// WideEntryError is a network in the daemon's allowlist that neither
// [receiver] allow nor this box's networks contain.
type WideEntryError struct {
	File  string
	Entry netip.Prefix
}

func (e *WideEntryError) Error() string {
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
			return &WideEntryError{File: file, Entry: p}
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
	c := su.Samba
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
	allow, err := ReadAllowFile(su.AllowFile, owner.uid)
	if err == nil {
		err = checkNetworks(su.AllowFile, allow, su.Networks)
	}
	c.Allow = allow
	res := ShareResult{Conf: c.confPath()}
	if err := c.makeDirs(); err != nil {
		return res, err
	}
	applied := filepath.Join(c.Dir, "allow") // the last list taken, root's own copy
	if err != nil {
		res.Refused = err.Error()
		log.Error("the daemon's allowlist is refused; the share keeps the last good one", "file", su.AllowFile, "err", err)
		b, rerr := os.ReadFile(applied)
		if rerr != nil {
			return res, fmt.Errorf("the daemon's allowlist is refused and none was taken before: %w", err)
		}
		if c.Allow, rerr = ParseAllow(applied, b); rerr != nil {
			return res, fmt.Errorf("the daemon's allowlist is refused (%v), and the last good one cannot be read: %w", err, rerr)
		}
	}
	if err := os.Chown(c.logDir(), 0, owner.gid); err != nil {
		return res, fmt.Errorf("smbd dirs: %w", err)
	}
	if err := FullAuditModule(ctx, c.Bin.Smbd); err != nil {
		return res, err
	}
	s, err := NewSamba(c)
	if err != nil {
		return res, err
	}
	if res.Changed, err = s.WriteConfig(ctx); err != nil {
		return res, err
	}
	if res.Refused == "" {
		res.Allow = c.Allow
		if err := writeFileAtomic(applied, FormatAllow(c.Allow), 0o644); err != nil {
			return res, err
		}
	}
	if err := s.SetAccounts(ctx); err != nil {
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

// FullAuditModule checks that the smbd at path (zero: found as NewSamba
// does) has its full_audit module: it asks smbd for its MODULESDIR
// (smbd -b) and looks for vfs/full_audit.so there.
func FullAuditModule(ctx context.Context, smbd string) error {
	b, err := SambaConfig{Bin: SambaBin{Smbd: smbd}}.bin()
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
