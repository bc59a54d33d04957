package snmp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/gosnmp/gosnmp"
)

// client is one gosnmp session owner. A Poller worker keeps one for its
// whole life and points it at one device after another; it is never shared
// between goroutines.
type client struct {
	g    *gosnmp.GoSNMP
	pdus atomic.Int64 // requests sent (retries included)
	open bool
}

func newClient() *client {
	c := &client{g: &gosnmp.GoSNMP{}}
	c.g.OnSent = func(*gosnmp.GoSNMP) { c.pdus.Add(1) }
	return c
}

// v3State keeps what engine discovery learnt about a device, so that the
// next poll of it needs no discovery request.
type v3State struct {
	usm             *gosnmp.UsmSecurityParameters
	contextEngineID string
}

// connect points the client at t and opens its socket.
func (c *client) connect(ctx context.Context, t Target, maxRep uint32, v3 *v3State) error {
	c.close()
	t = t.withDefaults()
	g := c.g
	g.Target = t.Host
	g.Port = t.Port
	g.Transport = "udp"
	g.Context = ctx
	g.Timeout = t.Timeout
	g.Retries = t.Retries
	g.ExponentialTimeout = false
	g.MaxOids = gosnmp.MaxOids
	g.MaxRepetitions = maxRep
	g.Community = ""
	g.SecurityParameters = nil
	g.MsgFlags = 0
	g.SecurityModel = 0
	g.ContextName = ""
	g.ContextEngineID = ""
	switch t.Version {
	case V1:
		g.Version = gosnmp.Version1
		g.Community = t.Community.Reveal()
	case V2c:
		g.Version = gosnmp.Version2c
		g.Community = t.Community.Reveal()
	case V3:
		if t.V3 == nil {
			return errors.New("v3 without credentials")
		}
		g.Version = gosnmp.Version3
		g.SecurityModel = gosnmp.UserSecurityModel
		g.ContextName = t.V3.ContextName
		if v3 != nil && v3.usm != nil {
			g.SecurityParameters = v3.usm
			g.ContextEngineID = v3.contextEngineID
		} else {
			usm, flags, err := usmFor(t.V3)
			if err != nil {
				return err
			}
			g.SecurityParameters = usm
			g.MsgFlags = flags
			if v3 != nil {
				v3.usm = usm
			}
		}
		if g.MsgFlags == 0 {
			g.MsgFlags = gosnmp.AuthPriv
			if t.V3.PrivPass.IsZero() {
				g.MsgFlags = gosnmp.AuthNoPriv
			}
		}
	default:
		return fmt.Errorf("version %q", t.Version)
	}
	if err := g.Connect(); err != nil {
		return fmt.Errorf("open socket to %s: %w", t.Addr(), err)
	}
	c.open = true
	return nil
}

// remember saves what v3 discovery learnt.
func (c *client) remember(v3 *v3State) {
	if v3 != nil && c.g.Version == gosnmp.Version3 {
		v3.contextEngineID = c.g.ContextEngineID
	}
}

func (c *client) close() {
	if c.open {
		c.g.Close()
		c.open = false
	}
}

// call runs one gosnmp request under ctx: a cancelled context closes the
// socket so that a blocked read returns at once.
func (c *client) call(ctx context.Context, fn func() (*gosnmp.SnmpPacket, error)) (*gosnmp.SnmpPacket, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.g.Context = ctx
	conn := c.g.Conn
	stop := context.AfterFunc(ctx, func() {
		if conn != nil {
			conn.Close()
		}
	})
	pkt, err := fn()
	if !stop() {
		// The socket was closed under gosnmp: report the context's reason.
		c.open = false
		c.g.Conn = nil
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, translateError(err)
	}
	if pkt == nil {
		return nil, errors.New("no response packet")
	}
	if pkt.Error != gosnmp.NoError {
		return pkt, &PDUError{Status: pkt.Error.String(), Index: int(pkt.ErrorIndex)}
	}
	return pkt, nil
}

func (c *client) get(ctx context.Context, oids []string) (*gosnmp.SnmpPacket, error) {
	return c.call(ctx, func() (*gosnmp.SnmpPacket, error) { return c.g.Get(oids) })
}

func (c *client) getNext(ctx context.Context, oids []string) (*gosnmp.SnmpPacket, error) {
	return c.call(ctx, func() (*gosnmp.SnmpPacket, error) { return c.g.GetNext(oids) })
}

func (c *client) getBulk(ctx context.Context, oids []string, nonRepeaters uint8, maxRep uint32) (*gosnmp.SnmpPacket, error) {
	return c.call(ctx, func() (*gosnmp.SnmpPacket, error) { return c.g.GetBulk(oids, nonRepeaters, maxRep) })
}

// PDUError is an SNMP error-status in a response (noSuchName, tooBig …).
type PDUError struct {
	Status string
	Index  int
}

func (e *PDUError) Error() string {
	return fmt.Sprintf("agent answered %s (varbind %d)", e.Status, e.Index)
}

// ErrNoAnswer means the device did not answer within timeout and retries.
var ErrNoAnswer = errors.New("no answer (wrong community/credentials, SNMP off, or host down)")

// translateError maps gosnmp's errors to ours in one place.
func translateError(err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, gosnmp.ErrMaxRetriesExceeded), strings.Contains(err.Error(), "timeout"):
		return fmt.Errorf("%w: %v", ErrNoAnswer, err)
	case errors.Is(err, gosnmp.ErrWrongDigest), errors.Is(err, gosnmp.ErrUnknownUsername),
		errors.Is(err, gosnmp.ErrUnknownSecurityLevel), errors.Is(err, gosnmp.ErrDecryption):
		return fmt.Errorf("v3 authentication refused: %w", err)
	case strings.Contains(err.Error(), "connection refused"):
		return fmt.Errorf("%w: port closed (ICMP unreachable)", ErrNoAnswer)
	}
	return err
}

func usmFor(a *V3Auth) (*gosnmp.UsmSecurityParameters, gosnmp.SnmpV3MsgFlags, error) {
	ap, err := authProto(a.AuthProto)
	if err != nil {
		return nil, 0, err
	}
	usm := &gosnmp.UsmSecurityParameters{
		UserName:                 a.User,
		AuthenticationProtocol:   ap,
		AuthenticationPassphrase: a.AuthPass.Reveal(),
		PrivacyProtocol:          gosnmp.NoPriv,
	}
	flags := gosnmp.AuthNoPriv
	if !a.PrivPass.IsZero() {
		pp, err := privProto(a.PrivProto)
		if err != nil {
			return nil, 0, err
		}
		usm.PrivacyProtocol = pp
		usm.PrivacyPassphrase = a.PrivPass.Reveal()
		flags = gosnmp.AuthPriv
	}
	return usm, flags, nil
}

func authProto(s string) (gosnmp.SnmpV3AuthProtocol, error) {
	switch strings.ToUpper(s) {
	case "", "SHA", "SHA1":
		return gosnmp.SHA, nil
	case "SHA224":
		return gosnmp.SHA224, nil
	case "SHA256":
		return gosnmp.SHA256, nil
	case "SHA384":
		return gosnmp.SHA384, nil
	case "SHA512":
		return gosnmp.SHA512, nil
	case "MD5":
		return gosnmp.MD5, nil
	}
	return 0, fmt.Errorf("v3 auth protocol %q is not SHA, SHA224, SHA256, SHA384, SHA512 or MD5", s)
}

func privProto(s string) (gosnmp.SnmpV3PrivProtocol, error) {
	switch strings.ToUpper(s) {
	case "", "AES", "AES128":
		return gosnmp.AES, nil
	case "AES192":
		return gosnmp.AES192, nil
	case "AES256":
		return gosnmp.AES256, nil
	case "AES192C":
		return gosnmp.AES192C, nil
	case "AES256C":
		return gosnmp.AES256C, nil
	case "DES":
		return gosnmp.DES, nil
	}
	return 0, fmt.Errorf("v3 priv protocol %q is not AES, AES192, AES256, AES192C, AES256C or DES", s)
}
