package smbcheck

// The exported dialer: a session on a destination's folder that another part
// (the receiver's forwarder) writes through, logged on exactly as a check
// replays the MFP's logon — the destination's auth (NTLM with the stored
// user name form and the MFP's NetBIOS name as workstation, or the check's
// Kerberos logon) — behind the same failure ledger.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// DialOptions tune Dial. Zero values mean zero: the caller fills its
// defaults where its configuration is read.
type DialOptions struct {
	// Ledger is asked right before the NTLM AUTHENTICATE leaves, as in a
	// check; nil keeps the attempt in a ledger private to this call.
	Ledger smbclient.Ledger
	// MaxFailures is the failed-logon budget per account and Window: 0
	// sends no logon at all (every logon could fail).
	MaxFailures int
	// Window is the budget's observation window (0: DefaultWindow).
	Window time.Duration
	// Timeout bounds the connection, the logon and each later operation
	// (0: DefaultTimeout).
	Timeout time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Kerberos is where a Kerberos logon (Target.Auth kerberos or auto)
	// looks for the realm and KDCs when the user name and DNS do not say:
	// the same as a check's (ad.Directory.Kerberos).
	Kerberos Kerberos
	// Resolver resolves the host and, when it has LookupSRV, the realm's
	// KDCs (nil: the system resolver).
	Resolver Resolver
	// Accounts, when set, is asked which account the stored user name
	// names, as a check's ad step asks its Directory: the ledger then
	// counts the logon against that account (DOMAIN\sAMAccountName) with
	// its budget, as a check of the same destination does, even where a
	// UPN's prefix is not the sAMAccountName. Nil (no [ad]), unanswered
	// or not applying (an account local to the server, another domain's
	// directory): the server's NTLM domain and the base user name, as in a
	// check without a directory.
	Accounts Accounts
	// Logger gets what is not the caller's to handle (a ledger that
	// cannot record an outcome, a directory that could not be asked); nil:
	// discarded.
	Logger *slog.Logger

	// account is Accounts' answer for the target (nil: none).
	account *Account
}

// Defaults of DialOptions' durations.
const (
	DefaultWindow  = defaultWindow
	DefaultTimeout = defaultStepTimeout
)

// Error is what Dial and the Session's operations return: the operation,
// the path within the destination folder, the cause from the vocabulary
// and the underlying error (errors.Is(err, os.ErrNotExist) and
// os.ErrPermission work through it).
type Error struct {
	Op     string           // "connect", "logon", "tree connect", "folder", "create", "write", "read", "rename", "stat", "remove", "list", "close"
	Path   string           // relative to the destination folder; "" for the folder itself
	Cause  scanwarden.Cause // CauseUnknown when nothing more is known
	Status ntstatus.Status  // the NT status, when the server sent one
	// Refusal is set when the ledger kept the logon back: nothing was sent.
	Refusal *smbclient.Refusal
	// KDCError is the KDC's KRB-ERROR code when it refused a Kerberos
	// logon (errorcode.KDC_ERR_PREAUTH_FAILED: the password is wrong).
	KDCError int32
	Err      error
}

// LogonFailed reports whether the logon was refused for the account or
// its password — by the server (a logon failure), by the KDC (a KRB-ERROR
// about the client or a clock skew) — or kept back by the ledger: trying
// again could count toward the account's lockout.
func (e *Error) LogonFailed() bool {
	if e.Refusal != nil {
		return true
	}
	if e.Op != "logon" {
		return false
	}
	return e.Status.IsLogonFailure() || e.KDCError != 0 && e.Cause != scanwarden.CauseKerberosNeedsName
}

func (e *Error) Error() string {
	s := e.Op
	if e.Path != "" {
		s += " " + e.Path
	}
	return fmt.Sprintf("%s: %v (%s)", s, e.Err, e.Cause)
}

func (e *Error) Unwrap() error { return e.Err }

// opStep maps an operation to the check step whose statuses it shares.
var opStep = map[string]string{
	"connect": StepTCP, "logon": StepSession, "tree connect": StepTree, "folder": StepPath,
	"create": StepWrite, "write": StepWrite, "read": StepPath, "rename": StepWrite,
	"stat": StepPath, "remove": "delete", "list": StepPath, "close": StepWrite,
}

// opError wraps err (nil stays nil).
func opError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return newError(op, path, err)
}

func newError(op, path string, err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	cause, _ := classify(opStep[op], err)
	st, _ := smbconn.StatusOf(err)
	return &Error{Op: op, Path: path, Cause: cause, Status: st, Err: err}
}

// Session is a logged-on tree connection to a destination's folder: every
// name given to its methods is relative to that folder (Target.Path) and
// must be a plain file name or a relative path without "..". It is safe
// for use by one goroutine at a time; Close logs off.
type Session struct {
	t       Target
	timeout time.Duration
	guest   bool
	dialect string
	sess    *smbconn.Conn
	tree    *smbconn.Share
	folder  string // Target.Path with backslashes, "" for the share root

	closeOnce sync.Once
}

// Dial connects to t's host, logs on exactly as the MFP stores the
// destination (see Target) — over Kerberos for auth kerberos, and for auth
// auto first, as Run does — connects the share and checks that the folder
// exists. The ledger gate applies as in Run, to an NTLM AUTHENTICATE and a
// Kerberos password try alike: a refused logon is an *Error with Refusal
// set and nothing sent.
func Dial(ctx context.Context, t Target, o DialOptions) (*Session, error) {
	o = o.withDefaults()
	if err := t.Validate(); err != nil {
		return nil, &Error{Op: "connect", Cause: scanwarden.CauseUnknown, Err: err}
	}
	folder := strings.Join(t.pathParts(), `\`)
	o.account = o.lookupAccount(ctx, t.Host, t.User, t.workstation())
	logonFn := dialLogon
	if t.auth() != AuthNTLM {
		logonFn = dialKerberos
	}
	sess, info, err := logonFn(ctx, t, o)
	if err != nil {
		return nil, err
	}
	s := &Session{t: t, timeout: o.Timeout, sess: sess, guest: sess.Guest(), folder: folder}
	if info != nil {
		s.dialect = info.Dialect
	}
	if err := s.connectFolder(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// withDefaults fills the options left at zero.
func (o DialOptions) withDefaults() DialOptions {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Ledger == nil {
		o.Ledger = &smbclient.MemoryLedger{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// lookupAccount asks o.Accounts (when set) about t's user, before any
// connection so that no logon waits for the directory; nil when it is not
// set, could not be asked (logged: the logon goes on as without a
// directory, as a check's does) or has no such account.
func (o DialOptions) lookupAccount(ctx context.Context, host, user, workstation string) *Account {
	if o.Accounts == nil {
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	acct, err := o.Accounts.Account(actx, user, workstation)
	if err != nil {
		o.Logger.Warn("Active Directory could not be asked about the account; the logon is counted under its typed name", "host", host, "user", user, "err", err)
		return nil
	}
	if !acct.Found {
		return nil
	}
	return acct
}

// dialAddr is the address to connect to for t: host through o.Resolver
// when one is given (its first address), else host itself (the system
// resolver).
func dialAddr(ctx context.Context, t Target, o DialOptions) (host, addr string, err error) {
	host = strings.Trim(t.Host, "[]")
	if o.Resolver == nil || net.ParseIP(host) != nil {
		return host, host, nil
	}
	lctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	addrs, err := o.Resolver.LookupHost(lctx, host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("%s has no address", host)
	}
	if err != nil {
		return host, "", &Error{Op: "connect", Cause: scanwarden.CauseNameUnresolved, Err: fmt.Errorf("resolve %s: %w", host, err)}
	}
	return host, addrs[0], nil
}

// dialLogon connects to t's host and logs on behind the ledger gate (over
// SMB1 on a fresh connection when the server does not negotiate SMB2/3),
// and records the logon's outcome in the ledger. Errors are *Error.
func dialLogon(ctx context.Context, t Target, o DialOptions) (*smbconn.Conn, *smbconn.ServerInfo, error) {
	_, addr, err := dialAddr(ctx, t, o)
	if err != nil {
		return nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	conn, err := smbconn.DialTCP(dctx, addr, t.port())
	cancel()
	if err != nil {
		e := newError("connect", "", err)
		if e.Cause == scanwarden.CauseUnknown {
			e.Cause = scanwarden.CauseHostUnreachable
		}
		return nil, nil, e
	}
	f := storedForm(t.User)
	l := &dialLedger{ctx: ctx, o: o, t: t, addr: addr, f: f}
	lctx, lcancel := context.WithTimeout(ctx, o.Timeout)
	sess, info, err := smbconn.Logon(lctx, conn, t.port(), t.Host, credentials(f, t), smbconn.Device{}, l.reserve)
	lcancel()
	if err != nil && info == nil && l.id == 0 && l.refusal == nil && !isTimeout(err) {
		if _, ok := smbconn.StatusOf(err); !ok {
			// No SMB2/3 negotiation: an SMB1-only server hangs up on it.
			// Log on over SMB1 on a fresh connection, behind the same gate.
			if sess1, info1, err1 := dialSMB1(ctx, t, addr, f, l.reserve, o.Timeout); info1 != nil {
				conn.Close()
				conn, sess, info, err = nil, sess1, info1, err1
			}
		}
	}
	rctx := context.WithoutCancel(ctx)
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		e := newError("logon", "", err)
		if l.refusal != nil {
			e.Refusal = l.refusal
			if l.refusal.Last != nil && l.refusal.Last.Cause != "" {
				e.Cause = l.refusal.Last.Cause
			}
			return nil, nil, e
		}
		if info == nil && e.Status == 0 && !isTimeout(err) {
			// The server negotiated neither SMB2/3 nor SMB1.
			e.Op = "connect"
		}
		if l.id != 0 {
			// The AUTHENTICATE left: it counts as a failure whatever
			// happened next (the DC may have counted it) — unless the
			// server refused NTLM itself, judging no password.
			out := smbclient.Outcome{Kind: smbclient.Failed, Cause: e.Cause, Status: e.Status.String()}
			if judgesNoPassword(e.Status) {
				out = smbclient.Outcome{Kind: smbclient.Cancelled}
			}
			o.Ledger.Resolve(rctx, l.id, out)
		}
		return nil, nil, e
	}
	if l.id != 0 {
		o.Ledger.Resolve(rctx, l.id, smbclient.Outcome{Kind: smbclient.Succeeded})
	}
	return sess, info, nil
}

// dialKerberos logs on as a Kerberos-capable MFP, with the check's own
// Kerberos logon (checker.kerberos: realm, KDC and its clock, the password
// try behind the ledger, the ticket for cifs/HOST): one NTLM negotiation
// whose AUTHENTICATE never leaves first learns the server's DNS domain, the
// realm of a user name without a UPN suffix, and its NTLM domain, the
// ledger's account. Auth auto goes on with NTLM where the check does: when
// Kerberos could not judge the password and the ledger did not keep it back.
func dialKerberos(ctx context.Context, t Target, o DialOptions) (*smbconn.Conn, *smbconn.ServerInfo, error) {
	host, addr, err := dialAddr(ctx, t, o)
	if err != nil {
		return nil, nil, err
	}
	info, err := dialProbe(ctx, t, addr, o)
	if err != nil {
		return nil, nil, err
	}
	if info == nil {
		// No SMB2/3, which Kerberos needs here: auto is then the MFP's
		// NTLM (over SMB1 if the server speaks only that).
		if t.auth() == AuthAuto {
			return dialLogon(ctx, t, o)
		}
		return nil, nil, &Error{Op: "connect", Cause: scanwarden.CauseSMB1OnlyServer, Err: fmt.Errorf("%s negotiates no SMB2/3: no Kerberos logon over it", host)}
	}
	c := o.checker(t, addr, info)
	k := krbLogon{c}.try(ctx)
	switch {
	case k.sess != nil:
		return k.sess, info, nil
	case t.auth() == AuthAuto && k.fallback && k.refused == nil:
		return dialLogon(ctx, t, o)
	}
	e := &Error{Op: "logon", Cause: k.cause, Refusal: k.refused, KDCError: k.code,
		Err: fmt.Errorf("Kerberos logon as %s: %s", orWord(k.principal, t.User), k.detail)}
	if k.cause == scanwarden.CauseHostUnreachable {
		e.Op = "connect"
	}
	return nil, nil, e
}

// dialProbe negotiates with the server as the MFP's NTLM logon would and
// stops before the AUTHENTICATE (nothing that could fail is sent): what the
// server told, nil when it negotiated no SMB2/3.
func dialProbe(ctx context.Context, t Target, addr string, o DialOptions) (*smbconn.ServerInfo, error) {
	lctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := smbconn.DialTCP(lctx, addr, t.port())
	if err != nil {
		e := newError("connect", "", err)
		if e.Cause == scanwarden.CauseUnknown {
			e.Cause = scanwarden.CauseHostUnreachable
		}
		return nil, e
	}
	defer conn.Close()
	var told *smbconn.ServerInfo
	_, info, err := smbconn.Logon(lctx, conn, t.port(), t.Host, credentials(storedForm(t.User), t), smbconn.Device{}, func(info *smbconn.ServerInfo) error {
		told = info
		return errProbed
	})
	if told != nil {
		return told, nil
	}
	if info == nil {
		if isTimeout(err) {
			return nil, newError("connect", "", err)
		}
		return nil, nil
	}
	// Negotiated, but the server ended the logon before its CHALLENGE.
	return nil, newError("logon", "", err)
}

// checker is the check state a logon of Dial runs in: Dial's target,
// ledger, budget, timeout and Kerberos hints, the server's negotiate, and
// the directory's account where a check's ad step would use it — so that
// the ledger's account key and budget are the check's.
func (o DialOptions) checker(t Target, addr string, info *smbconn.ServerInfo) *checker {
	co := Options{MaxFailures: o.MaxFailures, Window: o.Window, Ledger: o.Ledger, StepTimeout: o.Timeout,
		Resolver: o.Resolver, Realm: o.Kerberos.Realm, KDCs: o.Kerberos.KDCs, Logger: o.Logger, Now: o.Now}
	co.defaults()
	c := &checker{t: t, o: co, addr: addr, server: info, ledger: o.Ledger}
	c.useAccount(o.account)
	return c
}

// dialLedger is Dial's ledger gate: reserve asks the ledger before the
// AUTHENTICATE leaves and keeps the reservation (id) or the refusal.
type dialLedger struct {
	ctx     context.Context
	o       DialOptions
	t       Target
	addr    string
	f       Form
	id      int64
	refusal *smbclient.Refusal
}

func (l *dialLedger) reserve(info *smbconn.ServerInfo) error {
	key, err := l.o.Ledger.Key(l.ctx)
	if err != nil {
		return fmt.Errorf("failure ledger: %w", err)
	}
	c := l.o.checker(l.t, l.addr, info)
	a := smbclient.Attempt{Account: c.accountKey(), Form: smbclient.FormKey(l.f.Domain, l.f.User, l.t.Password.Reveal(), key), Typed: l.f.Typed, Seen: c.accountSeen()}
	l.id, l.refusal, err = smbclient.Reserve(l.ctx, l.o.Ledger, a, l.o.Now, l.o.Window, c.budget)
	if err != nil {
		return fmt.Errorf("failure ledger: %w", err)
	}
	if l.refusal != nil {
		return errors.New(l.refusal.Reason)
	}
	return nil
}

// connectFolder connects s's share and checks that its folder exists and
// is a folder; on failure the session is logged off.
func (s *Session) connectFolder(ctx context.Context) error {
	t, sess := s.t, s.sess
	tctx, tcancel := context.WithTimeout(ctx, s.timeout)
	defer tcancel()
	sh, err := sess.Mount(tctx, t.Host, t.Share)
	if err != nil {
		sess.Close()
		return opError("tree connect", "", err)
	}
	s.tree = sh
	if s.folder != "" {
		fi, err := s.tree.Stat(tctx, s.folder)
		if err == nil && !fi.IsDir() {
			err = &Error{Op: "folder", Cause: scanwarden.CausePathNotFound, Err: fmt.Errorf("%s is a file, not a folder", s.folder)}
		}
		if err != nil {
			s.Close()
			return opError("folder", "", err)
		}
	}
	return nil
}

// dialSMB1 logs on over SMB1 on a new connection to addr; the smbconn.ServerInfo
// is nil when the server did not negotiate SMB1.
func dialSMB1(ctx context.Context, t Target, addr string, f Form, g smbconn.Gate, timeout time.Duration) (*smbconn.Conn, *smbconn.ServerInfo, error) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := smbconn.DialTCP(lctx, addr, t.port())
	if err != nil {
		return nil, nil, err
	}
	sess, info, err := smbconn.LogonSMB1(lctx, conn, t.port(), t.Host, credentials(f, t), false, g)
	if err != nil {
		conn.Close()
	}
	return sess, info, err
}

// Guest reports whether the server logged the session on as guest: it did
// not check the password.
func (s *Session) Guest() bool { return s.guest }

// Dialect is the SMB dialect in use ("3.1.1", or "NT LM 0.12" for SMB1).
func (s *Session) Dialect() string { return s.dialect }

// rel turns a name relative to the folder into a share path.
func (s *Session) rel(name string) (string, error) {
	var parts []string
	for _, p := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if p == "." {
			continue
		}
		if p == ".." {
			return "", fmt.Errorf("%q: contains a .. component", name)
		}
		parts = append(parts, p)
	}
	if s.folder != "" {
		parts = append([]string{s.folder}, parts...)
	}
	return strings.Join(parts, `\`), nil
}

// op runs fn on the tree under ctx bounded by the session's timeout.
func (s *Session) op(ctx context.Context, op, name string, fn func(ctx context.Context, p string) error) error {
	p, err := s.rel(name)
	if err != nil {
		return &Error{Op: op, Path: name, Cause: scanwarden.CauseUnknown, Err: err}
	}
	octx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return opError(op, name, fn(octx, p))
}

// Create makes a new file name in the folder, failing when it exists
// (os.ErrExist), opened for writing and reading back. ctx bounds the whole
// life of the file; each operation on it is also bounded by the timeout.
func (s *Session) Create(ctx context.Context, name string) (*File, error) {
	return s.openFile(ctx, "create", name, os.O_RDWR|os.O_CREATE|os.O_EXCL)
}

// Open opens an existing file of the folder for reading.
func (s *Session) Open(ctx context.Context, name string) (*File, error) {
	return s.openFile(ctx, "read", name, os.O_RDONLY)
}

func (s *Session) openFile(ctx context.Context, op, name string, flag int) (*File, error) {
	p, err := s.rel(name)
	if err != nil {
		return nil, &Error{Op: op, Path: name, Cause: scanwarden.CauseUnknown, Err: err}
	}
	// The handle's context outlives this call; a watchdog cancels it when
	// one operation takes longer than the timeout.
	fctx, cancel := context.WithCancel(ctx)
	w := &watchdog{cancel: cancel, timeout: s.timeout}
	w.arm()
	f, err := s.tree.OpenFile(fctx, p, flag)
	w.disarm()
	if err != nil {
		cancel()
		return nil, opError(op, name, err)
	}
	return &File{f: f, name: name, w: w}, nil
}

// Rename renames a file of the folder. It fails with os.ErrExist when to
// exists: the server refuses (over SMB2/3 the rename is stamped not to
// replace, see stamp.go; on an encrypted session, where it cannot be, the
// name is looked up right before — one created by someone else in between
// would be replaced).
func (s *Session) Rename(ctx context.Context, from, to string) error {
	pto, err := s.rel(to)
	if err != nil {
		return &Error{Op: "rename", Path: to, Cause: scanwarden.CauseUnknown, Err: err}
	}
	return s.op(ctx, "rename", from, func(ctx context.Context, p string) error { return s.tree.Rename(ctx, p, pto) })
}

// Stat describes a file of the folder ("" is the folder itself).
func (s *Session) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := s.op(ctx, "stat", name, func(ctx context.Context, p string) error {
		var err error
		fi, err = s.tree.Stat(ctx, p)
		return err
	})
	return fi, err
}

// Remove deletes a file of the folder.
func (s *Session) Remove(ctx context.Context, name string) error {
	return s.op(ctx, "remove", name, func(ctx context.Context, p string) error { return s.tree.Remove(ctx, p) })
}

// ReadDir lists a folder below the destination folder ("" for itself).
func (s *Session) ReadDir(ctx context.Context, name string) ([]fs.FileInfo, error) {
	var list []fs.FileInfo
	err := s.op(ctx, "list", name, func(ctx context.Context, p string) error {
		var err error
		list, err = s.tree.ReadDir(ctx, p)
		return err
	})
	return list, err
}

// Close disconnects the share, logs off and closes the connection (each
// bounded); files still open are abandoned.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.tree != nil {
			s.tree.Close()
		}
		s.sess.Close()
	})
	return nil
}

// File is an open file of a Session's folder.
type File struct {
	f    smbconn.File
	name string
	w    *watchdog
}

// Name is the file's name as given to Create or Open.
func (f *File) Name() string { return f.name }

// Write writes p at the current offset (io.Writer).
func (f *File) Write(p []byte) (int, error) {
	f.w.arm()
	defer f.w.disarm()
	n, err := f.f.Write(p)
	return n, opError("write", f.name, err)
}

// Read reads from the current offset (io.Reader); io.EOF at the end.
func (f *File) Read(p []byte) (int, error) {
	f.w.arm()
	defer f.w.disarm()
	n, err := f.f.Read(p)
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, opError("read", f.name, err)
}

// WriteAt writes p at off (io.WriterAt). Unlike Write it may run
// concurrently with other WriteAt calls on the file over SMB2/3 (each
// request has its own message id and credits), so a large file can have
// several writes in flight; each call is bounded by the timeout. Over SMB1
// it returns errors.ErrUnsupported: use Write.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	wa, ok := f.f.(io.WriterAt)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	t := time.AfterFunc(f.w.timeout, f.w.cancel)
	defer t.Stop()
	n, err := wa.WriteAt(p, off)
	return n, opError("write", f.name, err)
}

// ReadAt reads at off (io.ReaderAt). Like WriteAt it may run concurrently
// with other ReadAt calls over SMB2/3; each call is bounded by the timeout.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	t := time.AfterFunc(f.w.timeout, f.w.cancel)
	defer t.Stop()
	n, err := f.f.ReadAt(p, off)
	if errors.Is(err, io.EOF) {
		return n, io.EOF
	}
	return n, opError("read", f.name, err)
}

// Seek sets the offset of the next Read or Write (io.Seeker).
func (f *File) Seek(off int64, whence int) (int64, error) {
	f.w.arm()
	defer f.w.disarm()
	n, err := f.f.Seek(off, whence)
	return n, opError("read", f.name, err)
}

// Sync asks the server to flush the file to disk.
func (f *File) Sync() error {
	f.w.arm()
	defer f.w.disarm()
	return opError("write", f.name, f.f.Sync())
}

// Stat describes the open file.
func (f *File) Stat() (fs.FileInfo, error) {
	f.w.arm()
	defer f.w.disarm()
	fi, err := f.f.Stat()
	return fi, opError("stat", f.name, err)
}

// Close closes the handle; a write the server could not store may show
// only here.
func (f *File) Close() error {
	f.w.arm()
	err := f.f.Close()
	f.w.disarm()
	f.w.cancel()
	return opError("close", f.name, err)
}

// watchdog cancels a handle's context when one operation outlasts timeout.
type watchdog struct {
	cancel  context.CancelFunc
	timeout time.Duration
	t       *time.Timer
}

func (w *watchdog) arm() {
	if w.t == nil {
		w.t = time.AfterFunc(w.timeout, w.cancel)
		return
	}
	w.t.Reset(w.timeout)
}

func (w *watchdog) disarm() { w.t.Stop() }
