package smbcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/internal/ntstatus"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// gatedLogon sends the check's logon attempts, behind the failure ledger's
// gate: the session step's, and the tree step's second opinions. The first
// one takes the negotiate and ad steps right before its AUTHENTICATE would
// leave.
type gatedLogon struct{ *checker }

// afterNegotiate records the negotiate step from what the first logon's
// server told, then the ad step; it runs inside that logon, before its
// AUTHENTICATE leaves. It reports whether the check may go on.
func (c gatedLogon) afterNegotiate(ctx context.Context, si *smbconn.ServerInfo, started time.Time) bool {
	if !c.negotiated {
		c.negotiated = true
		c.server = si
		s := c.begin(StepNegotiate)
		s.start = started
		if !negotiateStep(c).judgeNegotiate(ctx, s, si) {
			return false
		}
	}
	if c.o.Directory != nil && c.r.Step(StepAD) == nil {
		return adStep(c).stepAD(ctx)
	}
	return true
}

type attemptResult struct {
	gateAt  time.Time // when the AUTHENTICATE was let go (zero: never)
	sess    *smbconn.Conn
	info    *smbconn.ServerInfo // what the server told (nil: it did not negotiate)
	refused *smbclient.Refusal  // the ledger kept the logon back
	stopped bool                // the negotiate or ad step ended the check
	probed  bool                // a probe: the gate ended the logon on purpose
	cause   scanwarden.Cause
	status  ntstatus.Status
	err     error
	ev      Evidence // the classified error's evidence
}

// errStopped closes the gate when the negotiate or ad step failed.

// errProbed closes the gate of a probe (see checker.probing).

// attempt sends one logon with form. conn may be nil: then a fresh
// connection is dialed (and closed on failure). The failure ledger is asked
// at the last moment, right before the AUTHENTICATE would leave; on the
// first logon, the negotiate and ad steps are taken there too.
func (c gatedLogon) attempt(ctx context.Context, conn net.Conn, f smbclient.Form) attemptResult {
	if conn == nil {
		// An extra connection: the lowest dialect's are done first.
		c.settleFloor(true)
	}
	started := time.Now()
	// The logon has StepTimeout to answer; the time the gate spends (the
	// directory, the ledger) does not count against it.
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(c.o.StepTimeout, func() { cancel(os.ErrDeadlineExceeded) })
	defer timer.Stop()
	if conn == nil {
		var err error
		conn, err = smbconn.DialTCP(lctx, c.addr, c.t.DialPort())
		if err != nil {
			return attemptResult{err: err, cause: scanwarden.CauseHostUnreachable}
		}
	}
	var res attemptResult
	var id int64
	g := c.logonGate(ctx, f, started, timer, &res, &id)
	var sess *smbconn.Conn
	var info *smbconn.ServerInfo
	var err error
	if c.smb1 {
		sess, info, err = smbconn.LogonSMB1(lctx, conn, c.t.DialPort(), c.t.Host, smbclient.Credentials(f, c.t), c.o.Device.NTLMv1 && !c.ntlmv2, g)
	} else {
		dev := c.o.Device
		if c.as != nil {
			dev = *c.as
		}
		if c.ntlmv2 {
			dev.NTLMv1 = false
		}
		sess, info, err = smbconn.Logon(lctx, conn, c.t.DialPort(), c.t.Host, smbclient.Credentials(f, c.t), dev, g)
	}
	if err != nil && errors.Is(context.Cause(lctx), os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: no answer within %s: %w", err, c.o.StepTimeout, os.ErrDeadlineExceeded)
	}
	res.info = info
	rctx := context.WithoutCancel(ctx)
	if err == nil {
		if rerr := c.ledger.Resolve(rctx, id, smbclient.Outcome{Kind: smbclient.Succeeded}); rerr != nil {
			c.o.Logger.Warn("failure ledger", "err", rerr)
		}
		res.sess = sess
		return res
	}
	conn.Close()
	res.err = err
	if res.stopped || res.refused != nil || res.probed {
		return res
	}
	c.judgeAttempt(ctx, id, &res)
	return res
}

// logonGate is attempt's gate, called right before the AUTHENTICATE would
// leave: the first logon's negotiate and ad steps, then the failure ledger's
// reservation (in *id). The logon's timer stands still meanwhile.
func (c gatedLogon) logonGate(ctx context.Context, f smbclient.Form, started time.Time, timer *time.Timer, res *attemptResult, id *int64) smbconn.Gate {
	return func(info *smbconn.ServerInfo) error {
		timer.Stop()
		defer timer.Reset(c.o.StepTimeout)
		if !c.afterNegotiate(ctx, info, started) {
			res.stopped = true
			return errStopped
		}
		acct := c.logonAccount()
		c.budget = acct.Budget()
		if c.probing {
			res.probed = true
			return errProbed
		}
		key, err := c.ledger.Key(ctx)
		if err != nil {
			return fmt.Errorf("failure ledger: %w", err)
		}
		a := smbclient.Attempt{Account: acct.Key(), Form: smbclient.FormKey(f.Domain, f.User, c.t.Password.Reveal(), key), Typed: f.Typed, Seen: acct.Seen()}
		if c.ntlmv2 {
			// The NTLMv2 retry of an NTLMv1 device is another attempt.
			a.Form += "|ntlmv2"
		}
		*id, res.refused, err = smbclient.Admit(ctx, c.ledger, a, c.o.Now, c.o.Window, c.budget)
		if err != nil {
			return fmt.Errorf("failure ledger: %w", err)
		}
		if res.refused != nil {
			return errors.New(res.refused.Reason)
		}
		res.gateAt = time.Now()
		return nil
	}
}

// judgeAttempt classifies a failed logon's error (res.err) and resolves its
// reservation id in the failure ledger.
func (c gatedLogon) judgeAttempt(ctx context.Context, id int64, res *attemptResult) {
	rctx := context.WithoutCancel(ctx)
	res.cause, res.ev = classify(StepSession, res.err)
	res.status, _ = smbconn.StatusOf(res.err)
	if id == 0 {
		// The gate was never reached: no AUTHENTICATE was sent.
		return
	}
	// The AUTHENTICATE left: whatever happened next (no answer, a dropped
	// connection, an interrupt), the DC may have counted it, so it counts
	// here too — as a failure whose cause is what was observed.
	out := smbclient.Outcome{Kind: smbclient.Failed, Cause: res.cause, Status: res.status.String()}
	if smbclient.JudgesNoPassword(res.status) || res.status == ntstatus.AccessDenied && c.cannotEncrypt() {
		// The server refused NTLM itself, or this account's kind of
		// logon, or (ACCESS_DENIED to a client that cannot encrypt) a
		// session without encryption after the password was checked: no
		// bad password was counted, so the budget is not spent.
		out = smbclient.Outcome{Kind: smbclient.Cancelled}
	}
	if rerr := c.ledger.Resolve(rctx, id, out); rerr != nil {
		c.o.Logger.Warn("failure ledger", "err", rerr)
	}
}

// cannotEncrypt reports whether the replayed MFP cannot encrypt: it says
// so, or its highest dialect is below SMB 3.0 (SMB1 has no encryption
// either, and no server asks it to).
func (c gatedLogon) cannotEncrypt() bool {
	d := c.o.Device
	return !c.smb1 && (d.NoEncryption || d.MaxDialect != 0 && d.MaxDialect < DialectSMB30)
}

// ownClientAskedToEncrypt logs on once more as scanwarden's own client
// (which encrypts), in form f, and connects the share: it reports whether
// that client was let in and asked for SMB3 encryption. Used only after a
// refusal that is not about the password.
func (c gatedLogon) ownClientAskedToEncrypt(ctx context.Context, f smbclient.Form) bool {
	c.as = &smbconn.Device{}
	res := c.attempt(ctx, nil, f)
	c.as = nil
	if res.sess == nil {
		return false
	}
	defer res.sess.Close()
	tctx, cancel := context.WithTimeout(ctx, c.o.StepTimeout)
	defer cancel()
	sh, err := res.sess.Mount(tctx, c.t.Host, c.t.Share)
	if err != nil {
		return false
	}
	defer sh.Close()
	return sh.EncryptionAsked()
}
