package smbclient

// The exported dialer: a session on a destination's folder that another part
// (the receiver's forwarder) writes through, logged on exactly as a check
// replays the MFP's logon — the destination's auth (NTLM with the stored
// user name form and the MFP's NetBIOS name as workstation, or the check's
// Kerberos logon) — behind the same failure ledger.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// DialOptions tune Dial. Zero values mean zero: the caller fills its
// defaults where its configuration is read.
type DialOptions struct {
	// Ledger is asked right before the NTLM AUTHENTICATE leaves, as in a
	// check; nil keeps the attempt in a ledger private to this call.
	Ledger Ledger
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

// Defaults of DialOptions' durations, and of a check's.
const (
	DefaultWindow  = 30 * time.Minute
	DefaultTimeout = 10 * time.Second
)

// Dial connects to t's host, logs on exactly as the MFP stores the
// destination (see Target) — over Kerberos for auth kerberos, and for auth
// auto first, as Run does — connects the share and checks that the folder
// exists. The ledger gate applies as in Run, to an NTLM AUTHENTICATE and a
// Kerberos password try alike: a refused logon is an *Error with Refusal
// set and nothing sent.
func Dial(ctx context.Context, t scanwarden.Target, o DialOptions) (*Session, error) {
	o = o.withDefaults()
	if err := t.Validate(); err != nil {
		return nil, &Error{Op: "connect", Cause: scanwarden.CauseUnknown, Err: err}
	}
	folder := strings.Join(t.Folders(), `\`)
	o.account = o.lookupAccount(ctx, t.Host, t.User, t.WorkstationName())
	logonFn := dialLogon
	if t.LogonAuth() != scanwarden.AuthNTLM {
		logonFn = dialKerberos
	}
	sess, info, err := logonFn(ctx, t, o)
	if err != nil {
		return nil, err
	}
	dialect := ""
	if info != nil {
		dialect = info.Dialect
	}
	return mount(ctx, sess, t.Host, t.Share, folder, dialect, o.Timeout)
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
		o.Ledger = &MemoryLedger{}
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
func dialAddr(ctx context.Context, t scanwarden.Target, o DialOptions) (host, addr string, err error) {
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
func dialLogon(ctx context.Context, t scanwarden.Target, o DialOptions) (*smbconn.Conn, *smbconn.ServerInfo, error) {
	_, addr, err := dialAddr(ctx, t, o)
	if err != nil {
		return nil, nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	conn, err := smbconn.DialTCP(dctx, addr, t.DialPort())
	cancel()
	if err != nil {
		e := newError("connect", "", err)
		if e.Cause == scanwarden.CauseUnknown {
			e.Cause = scanwarden.CauseHostUnreachable
		}
		return nil, nil, e
	}
	f := StoredForm(t.User)
	l := &dialLedger{ctx: ctx, o: o, t: t, f: f}
	lctx, lcancel := context.WithTimeout(ctx, o.Timeout)
	sess, info, err := smbconn.Logon(lctx, conn, t.DialPort(), t.Host, Credentials(f, t), smbconn.Device{}, l.reserve)
	lcancel()
	if err != nil && info == nil && l.id == 0 && l.refusal == nil && !IsTimeout(err) {
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
		if info == nil && e.Status == 0 && !IsTimeout(err) {
			// The server negotiated neither SMB2/3 nor SMB1.
			e.Op = "connect"
		}
		if l.id != 0 {
			// The AUTHENTICATE left: it counts as a failure whatever
			// happened next (the DC may have counted it) — unless the
			// server refused NTLM itself, judging no password.
			out := Outcome{Kind: Failed, Cause: e.Cause, Status: e.Status.String()}
			if JudgesNoPassword(e.Status) {
				out = Outcome{Kind: Cancelled}
			}
			o.Ledger.Resolve(rctx, l.id, out)
		}
		return nil, nil, e
	}
	if l.id != 0 {
		o.Ledger.Resolve(rctx, l.id, Outcome{Kind: Succeeded})
	}
	return sess, info, nil
}

// dialKerberos logs on as a Kerberos-capable MFP, with the check's own
// Kerberos logon (KerberosLogon: realm, KDC and its clock, the password
// try behind the ledger, the ticket for cifs/HOST): one NTLM negotiation
// whose AUTHENTICATE never leaves first learns the server's DNS domain, the
// realm of a user name without a UPN suffix, and its NTLM domain, the
// ledger's account. Auth auto goes on with NTLM where the check does: when
// Kerberos could not judge the password and the ledger did not keep it back.
func dialKerberos(ctx context.Context, t scanwarden.Target, o DialOptions) (*smbconn.Conn, *smbconn.ServerInfo, error) {
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
		if t.LogonAuth() == scanwarden.AuthAuto {
			return dialLogon(ctx, t, o)
		}
		return nil, nil, &Error{Op: "connect", Cause: scanwarden.CauseSMB1OnlyServer, Err: fmt.Errorf("%s negotiates no SMB2/3: no Kerberos logon over it", host)}
	}
	k := o.kerberosLogon(t, addr, info).Try(ctx)
	switch {
	case k.Sess != nil:
		return k.Sess, info, nil
	case t.LogonAuth() == scanwarden.AuthAuto && k.Fallback && k.Refused == nil:
		return dialLogon(ctx, t, o)
	}
	e := &Error{Op: "logon", Cause: k.Cause, Refusal: k.Refused, KDCError: k.Code,
		Err: fmt.Errorf("Kerberos logon as %s: %s", cmp.Or(k.Principal, t.User), k.Detail)}
	if k.Cause == scanwarden.CauseHostUnreachable {
		e.Op = "connect"
	}
	return nil, nil, e
}

// dialProbe negotiates with the server as the MFP's NTLM logon would and
// stops before the AUTHENTICATE (nothing that could fail is sent): what the
// server told, nil when it negotiated no SMB2/3.
func dialProbe(ctx context.Context, t scanwarden.Target, addr string, o DialOptions) (*smbconn.ServerInfo, error) {
	lctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := smbconn.DialTCP(lctx, addr, t.DialPort())
	if err != nil {
		e := newError("connect", "", err)
		if e.Cause == scanwarden.CauseUnknown {
			e.Cause = scanwarden.CauseHostUnreachable
		}
		return nil, e
	}
	defer conn.Close()
	var told *smbconn.ServerInfo
	_, info, err := smbconn.Logon(lctx, conn, t.DialPort(), t.Host, Credentials(StoredForm(t.User), t), smbconn.Device{}, func(info *smbconn.ServerInfo) error {
		told = info
		return errProbed
	})
	if told != nil {
		return told, nil
	}
	if info == nil {
		if IsTimeout(err) {
			return nil, newError("connect", "", err)
		}
		return nil, nil
	}
	// Negotiated, but the server ended the logon before its CHALLENGE.
	return nil, newError("logon", "", err)
}

// logonAccount is the account a logon of Dial counts against, and its
// budget, as a check's: the directory's account where a check's ad step
// would use it.
func (o DialOptions) logonAccount(t scanwarden.Target, info *smbconn.ServerInfo) LogonAccount {
	a := LogonAccount{Target: t, Server: info, MaxFailures: max(o.MaxFailures, 0)}
	a.Use(o.account)
	return a
}

// kerberosLogon is Dial's Kerberos logon, the check's (KerberosLogon).
func (o DialOptions) kerberosLogon(t scanwarden.Target, addr string, info *smbconn.ServerInfo) KerberosLogon {
	a := o.logonAccount(t, info)
	return KerberosLogon{Account: a, Budget: a.Budget(), Ledger: o.Ledger, Window: o.Window, Addr: addr,
		Hints: o.Kerberos, Resolver: o.Resolver, Timeout: o.Timeout, Now: o.Now, Logger: o.Logger}
}

// dialLedger is Dial's ledger gate: reserve asks the ledger before the
// AUTHENTICATE leaves and keeps the reservation (id) or the refusal.
type dialLedger struct {
	ctx     context.Context
	o       DialOptions
	t       scanwarden.Target
	f       Form
	id      int64
	refusal *Refusal
}

func (l *dialLedger) reserve(info *smbconn.ServerInfo) error {
	key, err := l.o.Ledger.Key(l.ctx)
	if err != nil {
		return fmt.Errorf("failure ledger: %w", err)
	}
	acct := l.o.logonAccount(l.t, info)
	a := Attempt{Account: acct.Key(), Form: FormKey(l.f.Domain, l.f.User, l.t.Password.Reveal(), key), Typed: l.f.Typed, Seen: acct.Seen()}
	l.id, l.refusal, err = Admit(l.ctx, l.o.Ledger, a, l.o.Now, l.o.Window, acct.Budget())
	if err != nil {
		return fmt.Errorf("failure ledger: %w", err)
	}
	if l.refusal != nil {
		return errors.New(l.refusal.Reason)
	}
	return nil
}

// dialSMB1 logs on over SMB1 on a new connection to addr; the smbconn.ServerInfo
// is nil when the server did not negotiate SMB1.
func dialSMB1(ctx context.Context, t scanwarden.Target, addr string, f Form, g smbconn.Gate, timeout time.Duration) (*smbconn.Conn, *smbconn.ServerInfo, error) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := smbconn.DialTCP(lctx, addr, t.DialPort())
	if err != nil {
		return nil, nil, err
	}
	sess, info, err := smbconn.LogonSMB1(lctx, conn, t.DialPort(), t.Host, Credentials(f, t), false, g)
	if err != nil {
		conn.Close()
	}
	return sess, info, err
}

var errProbed = errors.New("negotiate only: no logon sent")
