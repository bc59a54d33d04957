package smbclient

// Kerberos logons: what a Kerberos-capable MFP sends, and how a check learns
// whether the stored password is right when a server refuses NTLM. The
// protocol is gokrb5's (through go-smb2's Krb5Initiator); this file finds the
// realm (its KDCs and their clock: kdc.go), lets the one password try leave
// only when the failure ledger allows it, and names what went wrong.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	smb2 "github.com/cloudsoda/go-smb2"
	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbconn"
)

// MaxSkew is what Kerberos allows between a client's clock and the KDC's.
const MaxSkew = 5 * time.Minute

// KerberosResult is what one Kerberos logon learned.
type KerberosResult struct {
	Realm     string
	Principal string // user@REALM
	SPN       string // cifs/host
	Source    string // where the KDCs came from
	Tried     []string
	KDC       string // the KDC that answered
	Offset    time.Duration
	HasOffset bool
	Code      int32 // the KDC's KRB-ERROR code (0: none)
	Cause     scanwarden.Cause
	Detail    string
	Sess      *smbconn.Conn
	Refused   *Refusal
	// Fallback: Kerberos could not judge the password (auto may go on
	// with NTLM).
	Fallback bool
}

// Evidence puts what the logon learned into a step's evidence.
func (k *KerberosResult) Evidence(ev map[string]any) {
	ev["kerberos"] = string(k.Cause)
	for key, v := range map[string]string{"kerberos_realm": k.Realm, "kerberos_principal": k.Principal, "kerberos_kdc": k.KDC,
		"kerberos_kdc_source": k.Source, "kerberos_spn": k.SPN} {
		if v != "" {
			ev[key] = v
		}
	}
	if len(k.Tried) > 0 {
		ev["kerberos_kdcs_tried"] = k.Tried
	}
	if k.HasOffset {
		ev["kdc_clock_offset_s"] = int64(k.Offset.Round(time.Second) / time.Second)
	}
	if k.Code != 0 {
		ev["krb_error"] = errorcode.Lookup(k.Code)
	}
	if k.Detail != "" && k.Cause != scanwarden.CauseOK {
		ev["kerberos_detail"] = k.Detail
	}
}

// KerberosLogon is a Kerberos-capable MFP's logon, the same for a check's
// session step (auth kerberos and auto, the replay behind an NTLM refusal)
// and a Dial: the realm and KDCs found, the KDC's clock read, the one
// password try behind the ledger, a ticket for cifs/HOST and the SMB2
// session setup with it.
type KerberosLogon struct {
	// Account is who the password try counts against, and where the
	// principal's realm and name come from (the target, the server's
	// negotiate, the directory's account).
	Account LogonAccount
	// Budget is the account's budget in the window (Account.Budget, as
	// the caller computed it).
	Budget int
	Ledger Ledger
	Window time.Duration
	// Addr is the server's address to connect to.
	Addr   string
	Device smbconn.Device
	// Hints are [ad]'s realm and KDCs.
	Hints    Kerberos
	Resolver Resolver // nil: the system resolver
	// Timeout bounds each exchange.
	Timeout time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
	// BeforeConnect, when set, is called before the session setup opens a
	// connection of its own (a check first settles the question another
	// extra connection of its asks: one at a time).
	BeforeConnect func()
}

// krbRealmUser is the principal the typed user name stands for: the UPN's
// suffix as realm, else the server's DNS domain (from the NTLM challenge),
// else the directory's, else the hints' realm ([ad]).
func (l KerberosLogon) krbRealmUser() (realm, user string) {
	u := ParseUserName(l.Account.Target.User)
	user, _ = BaseUser(l.Account.Target.User)
	if u.Kind == "upn" {
		return strings.ToUpper(u.Suffix), user
	}
	switch {
	case l.Account.Server != nil && l.Account.Server.DNSDomain != "":
		realm = l.Account.Server.DNSDomain
	case l.Account.Account != nil && l.Account.Account.Found && l.Account.Account.DNSDomain != "":
		realm = l.Account.Account.DNSDomain
	default:
		realm = l.Hints.Realm
	}
	if l.Account.Account != nil && l.Account.Account.Found && l.Account.Account.SAM != "" {
		user = l.Account.Account.SAM
	}
	return strings.ToUpper(realm), user
}

// krbCode finds the KDC's error code in an error from gokrb5, which folds
// the KRB-ERROR into its message ("KRB Error: (24) KDC_ERR_PREAUTH_FAILED
// …", krberror.Errorf): the number is read back from there.
var krbCodeRE = regexp.MustCompile(`KRB Error: \((\d+)\) `)

func krbCode(err error) int32 {
	var ke messages.KRBError
	if errors.As(err, &ke) {
		return ke.ErrorCode
	}
	if m := krbCodeRE.FindStringSubmatch(err.Error()); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return int32(n)
		}
	}
	return 0
}

// krbCause names a KDC's refusal of the client.
func (l KerberosLogon) krbCause(code int32) (scanwarden.Cause, string) {
	switch code {
	case errorcode.KDC_ERR_PREAUTH_FAILED:
		return scanwarden.CauseBadCredentials, "the KDC refuses the password (KDC_ERR_PREAUTH_FAILED)"
	case errorcode.KDC_ERR_C_PRINCIPAL_UNKNOWN:
		return scanwarden.CauseUnknownUser, "the KDC knows no such principal (KDC_ERR_C_PRINCIPAL_UNKNOWN)"
	case errorcode.KDC_ERR_CLIENT_REVOKED:
		if l.Account.Account != nil && l.Account.Account.Found && l.Account.Account.Cause != scanwarden.CauseOK && l.Account.Account.Cause != "" {
			return l.Account.Account.Cause, fmt.Sprintf("the KDC refuses the account (KDC_ERR_CLIENT_REVOKED); the directory says: %s", l.Account.Account.Summary)
		}
		return scanwarden.CauseAccountDisabled, "the KDC refuses the account (KDC_ERR_CLIENT_REVOKED): it is disabled, locked out or expired (set [ad] to tell which)"
	case errorcode.KDC_ERR_KEY_EXPIRED:
		if l.Account.Account != nil && l.Account.Account.Cause == scanwarden.CausePasswordMustChange {
			return scanwarden.CausePasswordMustChange, "the account must change its password (KDC_ERR_KEY_EXPIRED)"
		}
		return scanwarden.CausePasswordExpired, "the account's password has expired (KDC_ERR_KEY_EXPIRED)"
	case errorcode.KRB_AP_ERR_SKEW:
		return scanwarden.CauseClockSkew, "the KDC refuses the logon: the clocks differ by more than 5 minutes (KRB_AP_ERR_SKEW)"
	case errorcode.KDC_ERR_S_PRINCIPAL_UNKNOWN:
		return scanwarden.CauseKerberosNeedsName, "the KDC knows no service principal for this host (KDC_ERR_S_PRINCIPAL_UNKNOWN)"
	}
	return scanwarden.CauseUnknown, fmt.Sprintf("the KDC answers %s", errorcode.Lookup(code))
}

// Try logs on with the stored password over Kerberos, as a
// Kerberos-capable MFP does: realm and KDC as krbRealmUser and kdcs find
// them, the KDC's clock read first, then the one password try (the AS
// exchange with pre-authentication) behind the failure ledger, a service
// ticket for cifs/HOST, and the SMB2 session setup on a new connection.
func (l KerberosLogon) Try(ctx context.Context) *KerberosResult {
	if l.Resolver == nil {
		l.Resolver = net.DefaultResolver
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Logger == nil {
		l.Logger = slog.New(slog.DiscardHandler)
	}
	k := &KerberosResult{}
	realm, user := l.krbRealmUser()
	host := strings.ToLower(strings.Trim(l.Account.Target.Host, "[]"))
	k.SPN = "cifs/" + host
	kdcs, ok := l.krbFindKDC(ctx, k, realm, user)
	if !ok {
		return k
	}
	id, ok := l.krbReserve(ctx, k, realm, user)
	if !ok {
		return k
	}
	cfg := krbconfig.New()
	cfg.LibDefaults.DefaultRealm = realm
	cfg.LibDefaults.DNSLookupKDC = false
	cfg.LibDefaults.UDPPreferenceLimit = 1 // TCP only: AD's tickets are large
	ordered := append([]string{k.KDC}, without(kdcs, k.KDC)...)
	cfg.Realms = []krbconfig.Realm{{Realm: realm, KDC: ordered, DefaultDomain: strings.ToLower(realm)}}
	cl := krbclient.NewWithPassword(user, realm, l.Account.Target.Password.Reveal(), cfg, krbclient.DisablePAFXFAST(true))
	defer cl.Destroy()
	if !l.krbLogin(ctx, k, cl, id) {
		return k
	}
	l.krbSession(ctx, k, cl)
	return k
}

// krbFindKDC finds the realm's KDCs and the first that answers, reading its
// clock; false (with k's cause set) when there is none, or when it refuses
// the account before any password is sent.
func (l KerberosLogon) krbFindKDC(ctx context.Context, k *KerberosResult, realm, user string) ([]string, bool) {
	if realm == "" {
		k.Cause, k.Fallback = scanwarden.CauseKDCUnreachable, true
		k.Detail = "no Kerberos realm is known: the user name has no UPN suffix, the server names no DNS domain and [ad] is not set"
		return nil, false
	}
	k.Realm, k.Principal = realm, user+"@"+realm
	kdcs, source, err := kdcFinder{l.Resolver, l.Timeout, l.Hints.KDCs}.kdcs(ctx, realm)
	if err != nil {
		k.Cause, k.Fallback = scanwarden.CauseKDCUnreachable, true
		k.Detail = fmt.Sprintf("no KDC of realm %s is known: %s", realm, err.Error())
		return nil, false
	}
	k.Source = source
	kdc, code, offset, hasOffset, tried, err := kdcClock(ctx, kdcs, realm, user, l.Timeout, l.Now)
	k.Tried, k.KDC, k.Offset, k.HasOffset = tried, kdc, offset, hasOffset
	if err != nil {
		k.Cause, k.Fallback = scanwarden.CauseKDCUnreachable, true
		k.Detail = fmt.Sprintf("no KDC of realm %s answers (%s): %s", realm, source, err.Error())
		return nil, false
	}
	switch code {
	case 0, errorcode.KDC_ERR_PREAUTH_REQUIRED:
		return kdcs, true
	default:
		// Refused before any password was sent: nothing to gate.
		k.Code = code
		k.Cause, k.Detail = l.krbCause(code)
		return nil, false
	}
}

// krbReserve asks the failure ledger for the password try, gated like an
// NTLM AUTHENTICATE; false (with k's cause set) when it is not to be sent.
func (l KerberosLogon) krbReserve(ctx context.Context, k *KerberosResult, realm, user string) (int64, bool) {
	key, err := l.Ledger.Key(ctx)
	if err != nil {
		k.Cause, k.Detail = scanwarden.CauseUnknown, "failure ledger: "+err.Error()
		return 0, false
	}
	f := Form{Kind: "kerberos", User: user, Domain: realm, Typed: k.Principal}
	a := Attempt{Account: l.Account.Key(), Form: FormKey(f.Domain, f.User, l.Account.Target.Password.Reveal(), key) + "|kerberos", Typed: k.Principal + " (Kerberos)", At: l.Now()}
	id, refused, err := l.Ledger.Reserve(ctx, a, a.At.Add(-l.Window), l.Budget)
	if err != nil {
		k.Cause, k.Detail = scanwarden.CauseUnknown, "failure ledger: "+err.Error()
		return 0, false
	}
	if refused != nil {
		k.Refused = refused
		k.Cause = scanwarden.CauseUnknown
		if refused.Last != nil && refused.Last.Cause != "" {
			k.Cause = refused.Last.Cause
		}
		k.Detail = "not tried: " + refused.Reason
		return 0, false
	}
	return id, true
}

// krbLogin is the password try (the AS exchange), its outcome resolved in
// the ledger under reservation id; false (with k's cause set) when it fails.
func (l KerberosLogon) krbLogin(ctx context.Context, k *KerberosResult, cl *krbclient.Client, id int64) bool {
	rctx := context.WithoutCancel(ctx)
	loginErr := krbDo(ctx, l.Timeout*2, cl.Login)
	if loginErr != nil {
		k.Code = krbCode(loginErr)
		out := Outcome{Kind: Failed, Status: "Kerberos"}
		if k.Code == 0 {
			k.Cause, k.Detail = scanwarden.CauseKDCUnreachable, "the AS exchange failed: "+loginErr.Error()
			k.Fallback = true
		} else {
			k.Cause, k.Detail = l.krbCause(k.Code)
			out.Status = errorcode.Lookup(k.Code)
			k.Fallback = k.Cause == scanwarden.CauseClockSkew
		}
		out.Cause = k.Cause
		if rerr := l.Ledger.Resolve(rctx, id, out); rerr != nil {
			l.Logger.Warn("failure ledger", "err", rerr)
		}
		return false
	}
	if rerr := l.Ledger.Resolve(rctx, id, Outcome{Kind: Succeeded}); rerr != nil {
		l.Logger.Warn("failure ledger", "err", rerr)
	}
	return true
}

// krbSession gets a ticket for the server with the proven password and sets
// up the SMB2 session with it on a new connection: k.Sess, or k's cause.
func (l KerberosLogon) krbSession(ctx context.Context, k *KerberosResult, cl *krbclient.Client) {
	if err := krbDo(ctx, l.Timeout, func() error { _, _, err := cl.GetServiceTicket(k.SPN); return err }); err != nil {
		k.Code = krbCode(err)
		k.Cause, k.Detail = l.krbCause(k.Code)
		if k.Code == 0 {
			k.Cause, k.Detail = scanwarden.CauseKDCUnreachable, "the service ticket exchange failed: "+err.Error()
		}
		if k.Cause == scanwarden.CauseKerberosNeedsName {
			k.Detail = fmt.Sprintf("the password is right, but the KDC has no ticket for %s: %s", k.SPN, k.Detail)
		}
		k.Fallback = true
		return
	}
	if l.BeforeConnect != nil {
		l.BeforeConnect()
	}
	dctx, cancel := context.WithTimeout(ctx, l.Timeout)
	defer cancel()
	conn, err := smbconn.DialTCP(dctx, l.Addr, l.Account.Target.DialPort())
	if err != nil {
		k.Cause, k.Detail = scanwarden.CauseHostUnreachable, err.Error()
		return
	}
	ki := &smb2.Krb5Initiator{Client: cl, TargetSPN: k.SPN}
	sess, _, err := smbconn.LogonWith(dctx, conn, l.Account.Target.DialPort(), l.Account.Target.Host, k.Principal, ki, ki.SessionKey, l.Device, nil)
	if err != nil {
		conn.Close()
		k.Cause, _ = Classify(opLogon, err)
		k.Detail = "the SMB session setup with the Kerberos ticket failed: " + err.Error()
		return
	}
	k.Sess, k.Cause = sess, scanwarden.CauseOK
	k.Detail = fmt.Sprintf("logged on as %s over Kerberos (KDC %s)", k.Principal, k.KDC)
}

// krbDo runs a gokrb5 call, which takes no context (each KDC exchange is
// bounded by its own 5 s timeouts), and returns when it ends or ctx or
// timeout does; the call then ends by itself.
func krbDo(ctx context.Context, timeout time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("no answer from the KDC within %s: %w", timeout, os.ErrDeadlineExceeded)
	}
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
