package smbclient

// Finding a realm's KDCs and reading a KDC's clock, before any password
// is sent.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// kdcFinder finds a realm's KDCs: through resolver (DNS SRV records, then
// the hints' host names), each lookup bounded by timeout.
type kdcFinder struct {
	resolver Resolver
	timeout  time.Duration
	hints    []string // [ad]'s host or host:port
}

// srvResolver is what a Resolver offers to find KDCs (*net.Resolver does).
type srvResolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
}

// kdcs lists the realm's KDC addresses (ip:port): DNS SRV records
// _kerberos._tcp and _kerberos._udp of the realm, else the hints (the [ad]
// host). It says where they came from, or why none is known.
func (f kdcFinder) kdcs(ctx context.Context, realm string) ([]string, string, error) {
	sr, ok := f.resolver.(srvResolver)
	if !ok {
		sr = net.DefaultResolver
	}
	var why []string
	for _, proto := range []string{"tcp", "udp"} {
		name := fmt.Sprintf("_kerberos._%s.%s", proto, strings.ToLower(realm))
		lctx, cancel := context.WithTimeout(ctx, f.timeout)
		_, srvs, err := sr.LookupSRV(lctx, "kerberos", proto, strings.ToLower(realm))
		cancel()
		if err != nil || len(srvs) == 0 {
			why = append(why, fmt.Sprintf("DNS has no %s", name))
			continue
		}
		var out []string
		for _, s := range srvs {
			out = append(out, f.kdcAddrs(ctx, strings.TrimSuffix(s.Target, "."), int(s.Port))...)
		}
		if len(out) > 0 {
			return out, "DNS SRV " + name, nil
		}
		why = append(why, fmt.Sprintf("the targets of %s do not resolve", name))
	}
	var out []string
	for _, h := range f.hints {
		host, port := h, 88
		if hh, p, err := net.SplitHostPort(h); err == nil {
			if n, err := strconv.Atoi(p); err == nil {
				host, port = hh, n
			}
		}
		out = append(out, f.kdcAddrs(ctx, host, port)...)
	}
	if len(out) > 0 {
		return out, "the [ad] host (" + strings.Join(f.hints, ", ") + ")", nil
	}
	if len(f.hints) == 0 {
		why = append(why, "no [ad] host is set")
	} else {
		why = append(why, "the [ad] host does not resolve")
	}
	return nil, "", errors.New(strings.Join(why, "; "))
}

func (f kdcFinder) kdcAddrs(ctx context.Context, host string, port int) []string {
	if net.ParseIP(host) != nil {
		return []string{net.JoinHostPort(host, strconv.Itoa(port))}
	}
	lctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	addrs, err := f.resolver.LookupHost(lctx, host)
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
			errs = append(errs, fmt.Sprintf("%s: %s", addr, DescribeDialError(err)))
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
