package smbcheck

// Kerberos logons: what a Kerberos-capable MFP sends, and how a check learns
// whether the stored password is right when a server refuses NTLM. The
// protocol is gokrb5's (through go-smb2's Krb5Initiator); this file finds the
// realm and its KDCs, asks a KDC its clock, lets the one password try leave
// only when the failure ledger allows it, and names what went wrong.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// maxSkew is what Kerberos allows between a client's clock and the KDC's.
const maxSkew = 5 * time.Minute

// krbResult is what one Kerberos logon learned.
type krbResult struct {
	realm     string
	principal string // user@REALM
	spn       string // cifs/host
	source    string // where the KDCs came from
	tried     []string
	kdc       string // the KDC that answered
	offset    time.Duration
	hasOffset bool
	code      int32 // the KDC's KRB-ERROR code (0: none)
	cause     scanwarden.Cause
	detail    string
	sess      *smbconn.Conn
	refused   *smbclient.Refusal
	// fallback: Kerberos could not judge the password (auto may go on
	// with NTLM).
	fallback bool
}

func (k *krbResult) evidence(ev Evidence) {
	ev["kerberos"] = string(k.cause)
	for key, v := range map[string]string{"kerberos_realm": k.realm, "kerberos_principal": k.principal, "kerberos_kdc": k.kdc,
		"kerberos_kdc_source": k.source, "kerberos_spn": k.spn} {
		if v != "" {
			ev[key] = v
		}
	}
	if len(k.tried) > 0 {
		ev["kerberos_kdcs_tried"] = k.tried
	}
	if k.hasOffset {
		ev["kdc_clock_offset_s"] = int64(k.offset.Round(time.Second) / time.Second)
	}
	if k.code != 0 {
		ev["krb_error"] = errorcode.Lookup(k.code)
	}
	if k.detail != "" && k.cause != scanwarden.CauseOK {
		ev["kerberos_detail"] = k.detail
	}
}

// krbLogon is the check's Kerberos logon: the session step's (auth
// kerberos and auto, the replay behind an NTLM refusal) and Dial's.
type krbLogon struct{ *checker }

// krbRealmUser is the principal the typed user name stands for: the UPN's
// suffix as realm, else the server's DNS domain (from the NTLM challenge),
// else the directory's, else Options.Realm.
func (c krbLogon) krbRealmUser() (realm, user string) {
	u := smbclient.ParseUserName(c.t.User)
	user, _ = smbclient.BaseUser(c.t.User)
	if u.Kind == "upn" {
		return strings.ToUpper(u.Suffix), user
	}
	switch {
	case c.server != nil && c.server.DNSDomain != "":
		realm = c.server.DNSDomain
	case c.account != nil && c.account.Found && c.account.DNSDomain != "":
		realm = c.account.DNSDomain
	default:
		realm = c.o.Realm
	}
	if c.account != nil && c.account.Found && c.account.SAM != "" {
		user = c.account.SAM
	}
	return strings.ToUpper(realm), user
}

// srvResolver is what a Resolver offers to find KDCs (*net.Resolver does).
type srvResolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// kdcs lists the realm's KDC addresses (ip:port): DNS SRV records
// _kerberos._tcp and _kerberos._udp of the realm, else Options.KDCs (the
// [ad] host). It says where they came from, or why none is known.
func (c krbLogon) kdcs(ctx context.Context, realm string) ([]string, string, error) {
	sr, ok := c.o.Resolver.(srvResolver)
	if !ok {
		sr = net.DefaultResolver
	}
	var why []string
	for _, proto := range []string{"tcp", "udp"} {
		name := fmt.Sprintf("_kerberos._%s.%s", proto, strings.ToLower(realm))
		lctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
		_, srvs, err := sr.LookupSRV(lctx, "kerberos", proto, strings.ToLower(realm))
		cancel()
		if err != nil || len(srvs) == 0 {
			why = append(why, fmt.Sprintf("DNS has no %s", name))
			continue
		}
		var out []string
		for _, s := range srvs {
			out = append(out, c.kdcAddrs(ctx, strings.TrimSuffix(s.Target, "."), int(s.Port))...)
		}
		if len(out) > 0 {
			return out, "DNS SRV " + name, nil
		}
		why = append(why, fmt.Sprintf("the targets of %s do not resolve", name))
	}
	var out []string
	for _, h := range c.o.KDCs {
		host, port := h, 88
		if hh, p, err := net.SplitHostPort(h); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				host, port = hh, n
			}
		}
		out = append(out, c.kdcAddrs(ctx, host, port)...)
	}
	if len(out) > 0 {
		return out, "the [ad] host (" + strings.Join(c.o.KDCs, ", ") + ")", nil
	}
	if len(c.o.KDCs) == 0 {
		why = append(why, "no [ad] host is set")
	} else {
		why = append(why, "the [ad] host does not resolve")
	}
	return nil, "", errors.New(strings.Join(why, "; "))
}

func (c krbLogon) kdcAddrs(ctx context.Context, host string, port int) []string {
	if net.ParseIP(host) != nil {
		return []string{net.JoinHostPort(host, strconv.Itoa(port))}
	}
	lctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	addrs, err := c.o.Resolver.LookupHost(lctx, host)
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range addrs {
		out = append(out, net.JoinHostPort(a, strconv.Itoa(port)))
	}
	return out
}

// kdcClock sends one AS-REQ without pre-authentication (no password in it:
// it cannot count as a failed logon) to each KDC in turn until one answers,
// and reads the KDC's clock from its KRB-ERROR (normally "pre-authentication
// required"). It returns the KDC that answered, its error code (0 when it
// answered with a ticket: an account without pre-authentication) and the
// offset of its clock from ours.
func kdcClock(ctx context.Context, kdcs []string, realm, user string, timeout time.Duration, now func() time.Time) (kdc string, code int32, offset time.Duration, hasOffset bool, tried []string, err error) {
	cfg := krbconfig.New()
	cfg.LibDefaults.DefaultRealm = realm
	req, err := messages.NewASReqForTGT(realm, cfg, types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, user))
	if err != nil {
		return "", 0, 0, false, nil, fmt.Errorf("AS-REQ: %w", err)
	}
	b, err := req.Marshal()
	if err != nil {
		return "", 0, 0, false, nil, fmt.Errorf("AS-REQ: %w", err)
	}
	var errs []string
	for _, addr := range kdcs {
		tried = append(tried, addr)
		reply, err := kdcExchange(ctx, addr, b, timeout)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s", addr, describeDialError(err)))
			continue
		}
		got := now()
		var ke messages.KRBError
		if err := ke.Unmarshal(reply); err == nil {
			kt := ke.STime.Add(time.Duration(ke.Susec) * time.Microsecond)
			return addr, ke.ErrorCode, kt.Sub(got), true, tried, nil
		}
		var rep messages.ASRep
		if err := rep.Unmarshal(reply); err == nil {
			return addr, 0, 0, false, tried, nil
		}
		errs = append(errs, fmt.Sprintf("%s: an answer that is no Kerberos reply", addr))
	}
	return "", 0, 0, false, tried, errors.New(strings.Join(errs, "; "))
}

// kdcExchange sends one Kerberos message over TCP (RFC 4120 §7.2.2: a
// 4-byte length, then the message) and reads the reply, within timeout.
func kdcExchange(ctx context.Context, addr string, msg []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	out := make([]byte, 4+len(msg))
	binary.BigEndian.PutUint32(out, uint32(len(msg)))
	copy(out[4:], msg)
	if _, err := conn.Write(out); err != nil {
		return nil, err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > 1<<20 {
		return nil, fmt.Errorf("KDC reply of %d bytes", n)
	}
	reply := make([]byte, n)
	if _, err := io.ReadFull(conn, reply); err != nil {
		return nil, err
	}
	return reply, nil
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
func (c krbLogon) krbCause(code int32) (scanwarden.Cause, string) {
	switch code {
	case errorcode.KDC_ERR_PREAUTH_FAILED:
		return scanwarden.CauseBadCredentials, "the KDC refuses the password (KDC_ERR_PREAUTH_FAILED)"
	case errorcode.KDC_ERR_C_PRINCIPAL_UNKNOWN:
		return scanwarden.CauseUnknownUser, "the KDC knows no such principal (KDC_ERR_C_PRINCIPAL_UNKNOWN)"
	case errorcode.KDC_ERR_CLIENT_REVOKED:
		if c.account != nil && c.account.Found && c.account.Cause != scanwarden.CauseOK && c.account.Cause != "" {
			return c.account.Cause, fmt.Sprintf("the KDC refuses the account (KDC_ERR_CLIENT_REVOKED); the directory says: %s", c.account.Summary)
		}
		return scanwarden.CauseAccountDisabled, "the KDC refuses the account (KDC_ERR_CLIENT_REVOKED): it is disabled, locked out or expired (set [ad] to tell which)"
	case errorcode.KDC_ERR_KEY_EXPIRED:
		if c.account != nil && c.account.Cause == scanwarden.CausePasswordMustChange {
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

// try logs on with the stored password over Kerberos, as a
// Kerberos-capable MFP does: realm and KDC as krbRealmUser and kdcs find
// them, the KDC's clock read first, then the one password try (the AS
// exchange with pre-authentication) behind the failure ledger, a service
// ticket for cifs/HOST, and the SMB2 session setup on a new connection.
func (c krbLogon) try(ctx context.Context) *krbResult {
	k := &krbResult{}
	realm, user := c.krbRealmUser()
	host := strings.ToLower(strings.Trim(c.t.Host, "[]"))
	k.spn = "cifs/" + host
	kdcs, ok := c.krbFindKDC(ctx, k, realm, user)
	if !ok {
		return k
	}
	id, ok := c.krbReserve(ctx, k, realm, user)
	if !ok {
		return k
	}
	cfg := krbconfig.New()
	cfg.LibDefaults.DefaultRealm = realm
	cfg.LibDefaults.DNSLookupKDC = false
	cfg.LibDefaults.UDPPreferenceLimit = 1 // TCP only: AD's tickets are large
	ordered := append([]string{k.kdc}, without(kdcs, k.kdc)...)
	cfg.Realms = []krbconfig.Realm{{Realm: realm, KDC: ordered, DefaultDomain: strings.ToLower(realm)}}
	cl := krbclient.NewWithPassword(user, realm, c.t.Password.Reveal(), cfg, krbclient.DisablePAFXFAST(true))
	defer cl.Destroy()
	if !c.krbLogin(ctx, k, cl, id) {
		return k
	}
	c.krbSession(ctx, k, cl)
	return k
}

// krbFindKDC finds the realm's KDCs and the first that answers, reading its
// clock; false (with k's cause set) when there is none, or when it refuses
// the account before any password is sent.
func (c krbLogon) krbFindKDC(ctx context.Context, k *krbResult, realm, user string) ([]string, bool) {
	if realm == "" {
		k.cause, k.fallback = scanwarden.CauseKDCUnreachable, true
		k.detail = "no Kerberos realm is known: the user name has no UPN suffix, the server names no DNS domain and [ad] is not set"
		return nil, false
	}
	k.realm, k.principal = realm, user+"@"+realm
	kdcs, source, err := c.kdcs(ctx, realm)
	if err != nil {
		k.cause, k.fallback = scanwarden.CauseKDCUnreachable, true
		k.detail = fmt.Sprintf("no KDC of realm %s is known: %s", realm, err.Error())
		return nil, false
	}
	k.source = source
	kdc, code, offset, hasOffset, tried, err := kdcClock(ctx, kdcs, realm, user, c.o.StepTimeout, c.o.Now)
	k.tried, k.kdc, k.offset, k.hasOffset = tried, kdc, offset, hasOffset
	if err != nil {
		k.cause, k.fallback = scanwarden.CauseKDCUnreachable, true
		k.detail = fmt.Sprintf("no KDC of realm %s answers (%s): %s", realm, source, err.Error())
		return nil, false
	}
	switch code {
	case 0, errorcode.KDC_ERR_PREAUTH_REQUIRED:
		return kdcs, true
	default:
		// Refused before any password was sent: nothing to gate.
		k.code = code
		k.cause, k.detail = c.krbCause(code)
		return nil, false
	}
}

// krbReserve asks the failure ledger for the password try, gated like an
// NTLM AUTHENTICATE; false (with k's cause set) when it is not to be sent.
func (c krbLogon) krbReserve(ctx context.Context, k *krbResult, realm, user string) (int64, bool) {
	key, err := c.ledger.Key(ctx)
	if err != nil {
		k.cause, k.detail = scanwarden.CauseUnknown, "failure ledger: "+err.Error()
		return 0, false
	}
	f := smbclient.Form{Kind: "kerberos", User: user, Domain: realm, Typed: k.principal}
	a := smbclient.Attempt{Account: c.accountKey(), Form: smbclient.FormKey(f.Domain, f.User, c.t.Password.Reveal(), key) + "|kerberos", Typed: k.principal + " (Kerberos)", At: c.o.Now()}
	id, refused, err := c.ledger.Reserve(ctx, a, a.At.Add(-c.o.Window), c.budget)
	if err != nil {
		k.cause, k.detail = scanwarden.CauseUnknown, "failure ledger: "+err.Error()
		return 0, false
	}
	if refused != nil {
		k.refused = refused
		k.cause = scanwarden.CauseUnknown
		if refused.Last != nil && refused.Last.Cause != "" {
			k.cause = refused.Last.Cause
		}
		k.detail = "not tried: " + refused.Reason
		return 0, false
	}
	return id, true
}

// krbLogin is the password try (the AS exchange), its outcome resolved in
// the ledger under reservation id; false (with k's cause set) when it fails.
func (c krbLogon) krbLogin(ctx context.Context, k *krbResult, cl *krbclient.Client, id int64) bool {
	rctx := context.WithoutCancel(ctx)
	loginErr := krbDo(ctx, c.o.StepTimeout*2, cl.Login)
	if loginErr != nil {
		k.code = krbCode(loginErr)
		out := smbclient.Outcome{Kind: smbclient.Failed, Status: "Kerberos"}
		if k.code == 0 {
			k.cause, k.detail = scanwarden.CauseKDCUnreachable, "the AS exchange failed: "+loginErr.Error()
			k.fallback = true
		} else {
			k.cause, k.detail = c.krbCause(k.code)
			out.Status = errorcode.Lookup(k.code)
			k.fallback = k.cause == scanwarden.CauseClockSkew
		}
		out.Cause = k.cause
		if rerr := c.ledger.Resolve(rctx, id, out); rerr != nil {
			c.o.Logger.Warn("failure ledger", "err", rerr)
		}
		return false
	}
	if rerr := c.ledger.Resolve(rctx, id, smbclient.Outcome{Kind: smbclient.Succeeded}); rerr != nil {
		c.o.Logger.Warn("failure ledger", "err", rerr)
	}
	return true
}

// krbSession gets a ticket for the server with the proven password and sets
// up the SMB2 session with it on a new connection: k.sess, or k's cause.
func (c krbLogon) krbSession(ctx context.Context, k *krbResult, cl *krbclient.Client) {
	if err := krbDo(ctx, c.o.StepTimeout, func() error { _, _, err := cl.GetServiceTicket(k.spn); return err }); err != nil {
		k.code = krbCode(err)
		k.cause, k.detail = c.krbCause(k.code)
		if k.code == 0 {
			k.cause, k.detail = scanwarden.CauseKDCUnreachable, "the service ticket exchange failed: "+err.Error()
		}
		if k.cause == scanwarden.CauseKerberosNeedsName {
			k.detail = fmt.Sprintf("the password is right, but the KDC has no ticket for %s: %s", k.spn, k.detail)
		}
		k.fallback = true
		return
	}
	c.settleFloor() // one extra connection at a time
	dctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	conn, err := smbconn.DialTCP(dctx, c.addr, c.t.DialPort())
	if err != nil {
		k.cause, k.detail = scanwarden.CauseHostUnreachable, err.Error()
		return
	}
	ki := &smb2.Krb5Initiator{Client: cl, TargetSPN: k.spn}
	sess, _, err := smbconn.LogonWith(dctx, conn, c.t.DialPort(), c.t.Host, k.principal, ki, ki.SessionKey, c.o.Device, nil)
	if err != nil {
		conn.Close()
		k.cause, _ = classify(StepSession, err)
		k.detail = "the SMB session setup with the Kerberos ticket failed: " + err.Error()
		return
	}
	k.sess, k.cause = sess, scanwarden.CauseOK
	k.detail = fmt.Sprintf("logged on as %s over Kerberos (KDC %s)", k.principal, k.kdc)
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
