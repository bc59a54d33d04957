package samba

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
)

// A running smbd is not a working share: smbd listens and answers
// negotiate and session setup even when every tree connect of the share
// fails (a VFS module missing, the inbox gone, an smb.conf not reloaded).
// ProbeShare is what an MFP does — an SMB session and a tree connect to the
// share on its listen address as the MFP account — and names why it fails,
// from the NT status and the lines smbd wrote to its log meanwhile.

// ShareCause names why the fallback share refuses the MFPs. The ids are a
// contract (receiver status --json, doctor --json): never rename one.
type ShareCause string

const (
	ShareOK ShareCause = "ok"
	// ShareVFSModuleMissing: the share's VFS module (full_audit) is not
	// installed; every tree connect gets NT_STATUS_BAD_NETWORK_NAME
	// (smbd's log: "vfs_init failed").
	ShareVFSModuleMissing ShareCause = "vfs-module-missing"
	// ShareNotServed: NT_STATUS_BAD_NETWORK_NAME otherwise — the share's
	// folder (the inbox) is missing or smbd cannot enter it, or smbd runs an
	// smb.conf without the share.
	ShareNotServed ShareCause = "share-not-served"
	// ShareFolderDenied: the share connects, but the share's user may not
	// open its folder (NT_STATUS_ACCESS_DENIED): every upload fails.
	ShareFolderDenied ShareCause = "inbox-denied"
	// ShareLogonRefused: NT_STATUS_LOGON_FAILURE — smbd's passdb does not
	// hold the MFP account with the configured password.
	ShareLogonRefused ShareCause = "mfp-logon-refused"
	// ShareNotListening: the connection is refused: no smbd listens on the
	// share's address and port.
	ShareNotListening ShareCause = "smbd-not-listening"
	// ShareNoAnswer: the address accepts the connection but no SMB answer
	// comes in time.
	ShareNoAnswer ShareCause = "smbd-no-answer"
	// ShareNotAdmitted: smbd drops this box's own connection at once
	// (hosts allow): it runs an smb.conf that does not admit the listen
	// address.
	ShareNotAdmitted ShareCause = "box-not-admitted"
	// ShareUnknown: any other failure; Detail has the error and smbd's log.
	ShareUnknown ShareCause = "unknown"
)

// ShareHealth is one probe's result: data, never an error.
type ShareHealth struct {
	Cause    ShareCause `json:"cause"`
	NTStatus string     `json:"nt_status,omitempty"` // as smbd answered, when it did
	Detail   string     `json:"detail"`
	Fix      string     `json:"fix,omitempty"`
	// SmbdLog is the line smbd wrote about the refusal ("" when none was
	// read: its log is not readable here, or it said nothing).
	SmbdLog string    `json:"smbd_log,omitempty"`
	At      time.Time `json:"at"`
	MS      int64     `json:"ms"`
}

// OK says the MFP account could log on and connect the share.
func (h ShareHealth) OK() bool { return h.Cause == ShareOK }

// Err is the failure as an error (nil when OK): ErrVFSModuleMissing for a
// missing module (errors.Is works), else the detail and the fix.
func (h ShareHealth) Err() error {
	switch h.Cause {
	case ShareOK:
		return nil
	case ShareVFSModuleMissing:
		return fmt.Errorf("%s: %w", h.Detail, ErrVFSModuleMissing)
	}
	return fmt.Errorf("%s (fix: %s)", h.Detail, h.Fix)
}

// Summary is the one line for a status page: what is wrong and the fix.
func (h ShareHealth) Summary() string {
	if h.OK() {
		return h.Detail
	}
	return h.Detail + "; fix: " + h.Fix
}

// ShareProbe is what ProbeShare needs: where the share is served, the MFP
// account, and where smbd logs.
type ShareProbe struct {
	Listen  netip.Addr
	Port    int
	Share   string
	Account Account
	// Inbox is the share's folder (named in a refusal, and checked).
	Inbox string
	// SmbdDir is smbd's folder (its log is log/log.smbd there): read for
	// "vfs_init failed" and the like. "" or unreadable: judged on the NT
	// status alone.
	SmbdDir string
	// Smbd is the smbd program (zero: found as New does), asked for
	// its module folder before any connection (FullAuditModule).
	Smbd string
	// Unit: smbd runs under scanwarden-smbd.service (the installed layout);
	// the fixes then name systemctl. Otherwise `receiver run` runs it.
	Unit bool
	// Timeout bounds the connection, the logon and the tree connect
	// (0: 5 s).
	Timeout time.Duration
}

// smbdUnit is the fallback share's systemd unit (the installed layout).
const smbdUnit = "scanwarden-smbd.service"

// ProbeShare checks the fallback share as an MFP meets it: first that
// smbd's full_audit module is there (a file check), then an SMB session as
// the MFP account and a tree connect to the share on its listen address.
// The session is logged off at once; nothing is written. smbd's own passdb
// has no lockout, so a refused logon costs nothing.
func ProbeShare(ctx context.Context, p ShareProbe) ShareHealth {
	t0 := time.Now()
	h := probeShare(ctx, p)
	h.At, h.MS = t0, time.Since(t0).Milliseconds()
	return h
}

func probeShare(ctx context.Context, p ShareProbe) ShareHealth {
	addr := net.JoinHostPort(p.Listen.String(), strconv.Itoa(p.Port))
	unc := `\\` + p.Listen.String() + `\` + p.Share
	if p.Account.Name == "" || p.Account.Password.IsZero() {
		return ShareHealth{Cause: ShareUnknown, Detail: "the share is not probed: no MFP account and password to log on with",
			Fix: "give the MFP account's password ([receiver] account and password_file)"}
	}
	// the fast pre-check: the module's file, before any connection
	switch err := FullAuditModule(ctx, p.Smbd); {
	case errors.Is(err, ErrVFSModuleMissing):
		return ShareHealth{Cause: ShareVFSModuleMissing, Detail: fmt.Sprintf("smbd would refuse every MFP at %s: %v", unc, err), Fix: "apt-get install samba-vfs-modules"}
	case err != nil:
		return ShareHealth{Cause: ShareUnknown, Detail: fmt.Sprintf("Samba's module folder cannot be read: %v", err), Fix: "apt-get install samba"}
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	log := smbdLogFrom(p.SmbdDir)
	ctx, cancel := context.WithTimeout(ctx, 3*timeout)
	defer cancel()
	s, err := smbclient.Dial(ctx, scanwarden.Target{Host: p.Listen.String(), Port: p.Port, Share: p.Share, User: p.Account.Name,
		Password: p.Account.Password, Workstation: probeWorkstation},
		// a private ledger: the account is smbd's own (no domain, no
		// lockout); one logon per probe
		smbclient.DialOptions{MaxFailures: 1, Timeout: timeout})
	if err != nil {
		return p.refused(err, log.read(), addr, unc)
	}
	return p.connected(ctx, s, unc)
}

// connected judges a logon that smbd accepted: as the share's user, list
// the share's folder (what an MFP's "browse" does; nothing is written).
// smbd connects the share without entering it.
func (p ShareProbe) connected(ctx context.Context, s *smbclient.Session, unc string) ShareHealth {
	guest := s.Guest()
	_, lerr := s.ReadDir(ctx, "")
	s.Close()
	if guest {
		return ShareHealth{Cause: ShareLogonRefused, Detail: fmt.Sprintf("smbd logged the MFP account %s on as guest at %s: its passdb does not know the account", p.Account.Name, unc),
			Fix: p.fixPassdb()}
	}
	if lerr != nil {
		h := ShareHealth{Cause: ShareUnknown, Detail: fmt.Sprintf("the MFP account %s connects %s but cannot list its folder %s: %v", p.Account.Name, unc, p.Inbox, lerr), Fix: p.fixLog()}
		var se *smbclient.Error
		if errors.As(lerr, &se) && se.Status != 0 {
			h.NTStatus = se.Status.Name()
		}
		if errors.Is(lerr, os.ErrPermission) {
			h.Cause, h.NTStatus = ShareFolderDenied, ntstatus.AccessDenied.Name()
			h.Detail = fmt.Sprintf("the MFP account %s connects %s, but smbd is denied its folder %s (%s): every upload fails", p.Account.Name, unc, p.Inbox, h.NTStatus)
			h.Fix = fmt.Sprintf("the share's folder %s must belong to the daemon's user with mode 0750 (systemctl restart scanwarden makes it so when it makes the folder; else chown and chmod it)", p.Inbox)
			if !p.Unit {
				h.Fix = fmt.Sprintf("the share's folder %s must be readable and enterable by the share's user (chmod 750, owned by the user the receiver runs as)", p.Inbox)
			}
		}
		return h
	}
	return ShareHealth{Cause: ShareOK, Detail: fmt.Sprintf("the MFP account %s logged on and connected %s", p.Account.Name, unc)}
}

// refused names why smbd refused the probe (err), from the error and the
// lines smbd logged meanwhile (said).
func (p ShareProbe) refused(err error, said logLines, addr, unc string) ShareHealth {
	var se *smbclient.Error
	errors.As(err, &se)
	h := ShareHealth{Cause: ShareUnknown}
	if se != nil && se.Status != 0 {
		h.NTStatus = se.Status.Name()
	}
	var dial *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		h.Cause = ShareNotListening
		h.Detail = fmt.Sprintf("nothing listens on %s (connection refused): smbd is not running, or not on this address", addr)
		h.Fix = p.fixStart()
	case se != nil && se.Status == ntstatus.BadNetworkName && said.has("vfs_init failed"):
		h.Cause = ShareVFSModuleMissing
		h.SmbdLog = said.line("vfs_init failed")
		h.Detail = fmt.Sprintf("smbd refuses %s (NT_STATUS_BAD_NETWORK_NAME): a VFS module of the share does not load: %s", unc, ErrVFSModuleMissing)
		h.Fix = "apt-get install samba-vfs-modules"
		if l := said.line("Error loading module"); l != "" {
			h.SmbdLog = l
		}
	case se != nil && se.Status == ntstatus.BadNetworkName:
		h.Cause = ShareNotServed
		h.SmbdLog = said.line(p.Inbox, "canonicalize_connect_path", "chdir", "does not exist", "couldn't find service", "not found")
		h.Detail, h.Fix = p.notServed(unc)
	case se != nil && (se.Status.IsLogonFailure() || se.Op == "logon" && se.Cause == scanwarden.CauseBadCredentials):
		h.Cause = ShareLogonRefused
		h.SmbdLog = said.line("NT_STATUS_")
		h.Detail = fmt.Sprintf("smbd refuses the MFP account %s's logon at %s (%s): its passdb does not hold the account with the configured password", p.Account.Name, unc, h.NTStatus)
		h.Fix = p.fixPassdb()
	case said.deniedFrom(p.Listen) != "":
		h.Cause, h.SmbdLog = ShareNotAdmitted, said.deniedFrom(p.Listen)
		h.Detail = fmt.Sprintf("smbd drops this box's own connection to %s (hosts allow): it runs an smb.conf that does not admit %s", addr, p.Listen)
		h.Fix = p.fixReload()
	case errors.As(err, &dial) && dial.Op == "dial":
		h.Cause = ShareNotListening
		h.Detail = fmt.Sprintf("cannot connect to %s: %v", addr, dial.Err)
		h.Fix = p.fixStart()
	case se != nil && se.Status == 0 && (se.Op == "connect" || se.Op == "logon"):
		// connected, but no SMB answer came back (in time)
		h.Cause = ShareNoAnswer
		h.Detail = fmt.Sprintf("%s accepts the connection but does not answer as smbd does (%v)", addr, err)
		h.Fix = p.fixLog()
	default:
		h.SmbdLog = said.line("NT_STATUS_", "rror")
		h.Detail = fmt.Sprintf("the MFP account %s cannot use %s: %v", p.Account.Name, unc, err)
		h.Fix = p.fixLog()
	}
	return h
}

// notServed says why smbd does not serve the share (BAD_NETWORK_NAME
// without a module failure) and the fix.
func (p ShareProbe) notServed(unc string) (string, string) {
	st, err := os.Stat(p.Inbox)
	switch {
	case p.Inbox == "":
	case errors.Is(err, os.ErrNotExist):
		fix := "restart the receiver (`receiver run`): it makes the folder"
		if p.Unit {
			fix = "systemctl restart scanwarden (the daemon makes the folder, owned by its user)"
		}
		return fmt.Sprintf("smbd refuses %s (NT_STATUS_BAD_NETWORK_NAME): the share's folder %s does not exist", unc, p.Inbox), fix
	case err == nil && !st.IsDir():
		return fmt.Sprintf("smbd refuses %s (NT_STATUS_BAD_NETWORK_NAME): the share's folder %s is not a folder", unc, p.Inbox),
			"remove " + p.Inbox + " and restart the receiver, which makes the folder"
	}
	fix := "restart the receiver: it rewrites smb.conf and reloads smbd"
	if p.Unit {
		fix = "systemctl reload " + smbdUnit + " (its root step renders smb.conf from [receiver] in the config)"
	}
	return fmt.Sprintf("smbd refuses %s (NT_STATUS_BAD_NETWORK_NAME) though its folder %s is there: smbd's smb.conf does not serve that share (not reloaded since the config changed?)", unc, p.Inbox), fix
}

func (p ShareProbe) fixStart() string {
	if p.Unit {
		return "systemctl start " + smbdUnit + "; journalctl -u " + smbdUnit + " says why it stopped (and [receiver] listen must be an address of this box)"
	}
	return "the receiver (`receiver run`, `serve`) starts smbd: its log says why smbd is down"
}

func (p ShareProbe) fixPassdb() string {
	if p.Unit {
		return "systemctl restart " + smbdUnit + " (its root step puts the password of [receiver] password_file into smbd's passdb); the MFPs must store that same password"
	}
	return "restart the receiver: it puts the account's password into smbd's passdb; the MFPs must store that same password"
}

func (p ShareProbe) fixReload() string {
	if p.Unit {
		return "systemctl reload " + smbdUnit
	}
	return "restart the receiver: it rewrites smb.conf and reloads smbd"
}

func (p ShareProbe) fixLog() string {
	if p.SmbdDir == "" {
		return "smbd's log says why"
	}
	s := "smbd's log " + filepath.Join(p.SmbdDir, "log", "log.smbd") + " says why"
	if p.Unit {
		s += "; systemctl restart " + smbdUnit
	}
	return s
}

// smbdLog reads what smbd appends to its log from a point on: the lines
// about one probe.
type smbdLog struct {
	file string
	from int64
}

// smbdLogFrom marks the end of smbd's log in dir now ("": no log).
func smbdLogFrom(dir string) smbdLog {
	if dir == "" {
		return smbdLog{}
	}
	l := smbdLog{file: Config{Dir: dir}.logFile()}
	if st, err := os.Stat(l.file); err == nil {
		l.from = st.Size()
	}
	return l
}

// maxProbeLog bounds what one probe reads of smbd's log.
const maxProbeLog = 64 << 10

type logLines []string

// read is what smbd wrote since the mark (from the start when the file
// was rotated meanwhile), at most maxProbeLog bytes. The folder may come
// from a file the daemon writes (receiver.json, read by `receiver status`
// as root): the log is opened without following a link or waiting (a
// FIFO), and only a regular file is read.
func (l smbdLog) read() logLines {
	if l.file == "" {
		return nil
	}
	f, err := os.OpenFile(l.file, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if st.Size() < l.from {
		l.from = 0
	}
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, l.from, maxProbeLog), maxProbeLog))
	if err != nil {
		return nil
	}
	var out logLines
	for _, ln := range bytes.Split(b, []byte("\n")) {
		if s := strings.TrimSpace(string(ln)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (ls logLines) has(sub string) bool { return ls.line(sub) != "" }

// deniedFrom is smbd's line refusing a connection from ip by hosts allow
// ("Denied connection from NAME (IP)"), "" when there is none: another
// client's refusal, logged meanwhile, is not the probe's.
func (ls logLines) deniedFrom(ip netip.Addr) string {
	for _, l := range ls {
		if strings.Contains(l, "Denied connection from") && strings.Contains(l, "("+ip.String()+")") {
			return l
		}
	}
	return ""
}

// line is the first line holding any of subs (in the order given).
func (ls logLines) line(subs ...string) string {
	for _, sub := range subs {
		if sub == "" {
			continue
		}
		for _, l := range ls {
			if strings.Contains(l, sub) {
				if len(l) > 300 {
					l = l[:300]
				}
				return l
			}
		}
	}
	return ""
}
