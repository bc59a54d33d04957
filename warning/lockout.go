package warning

import (
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// ownSlack is how far the DC's clock and its badPasswordTime may sit from
// the span in which scanwarden sent one of its own failed logons and still
// be that logon.
const ownSlack = 5 * time.Second

// Evidence keys of lockout-pressure that the next judgement reads back.
const (
	evLastForeign     = "last_foreign_bad_password"
	evForeignTimeSure = "foreign_time_known"
	evForeignCount    = "foreign_bad_passwords"
)

// foreign is what one check learnt of bad passwords scanwarden did not
// send: how many at least, when the last came (At; Sure false when the DC's
// last bad password was scanwarden's own and the others' time is only
// known to lie before the check), and whether some of scanwarden's own
// logons had no known outcome (Unsure: the count may include them).
type foreign struct {
	N      int
	At     time.Time
	Sure   bool
	Unsure int
}

// seenForeign compares the account with this destination's previous check
// and subtracts the failed logons scanwarden itself sent in between (each
// with its time: the DC's badPasswordTime names one of them or not).
func seenForeign(th Thresholds, o Observation, h History) *foreign {
	prev := h.Account
	if o.Account == "" || prev == nil || o.LastBadPassword.IsZero() {
		return nil
	}
	// badPasswordTime may reach us in whole seconds: a bad password in the
	// same second as the previous check may have come just after it.
	if o.LastBadPassword.Before(prev.At.Truncate(time.Second)) {
		return nil
	}
	sameSecond := !o.LastBadPassword.After(prev.At)
	rise := o.BadPwdCount - prev.BadPwdCount
	if o.BadPwdCount <= prev.BadPwdCount {
		if sameSecond {
			return nil // no rise, and the bad password may be the one already counted
		}
		// The count restarted in between (a good logon, or the observation
		// window passed) and rose again: at least this many are new.
		rise = o.BadPwdCount
	}
	own, unknown, lastIsOwn := 0, 0, false
	for _, f := range h.OwnFailures {
		if f.At.Before(prev.At) || !f.At.Before(o.At) {
			continue
		}
		own++
		if f.Unknown {
			unknown++
		}
		until := f.Until
		if until.IsZero() || f.Unknown {
			until = o.At
		}
		if !o.LastBadPassword.Before(f.At.Add(-ownSlack)) && !o.LastBadPassword.After(until.Add(ownSlack)) {
			lastIsOwn = true
		}
	}
	f := &foreign{N: rise - own, At: o.LastBadPassword, Sure: true, Unsure: unknown}
	if !lastIsOwn {
		// The DC's last bad password came when scanwarden sent none: at
		// least that one is someone else's, whatever the count says (it
		// may have restarted in between).
		f.N = max(f.N, 1)
	} else {
		// The last was ours: the others came before it, when exactly the
		// DC does not say.
		f.At, f.Sure = o.At, false
	}
	if f.N < th.LockoutRise || f.N <= 0 {
		return nil
	}
	return f
}

// lockoutPressure: bad passwords scanwarden did not send reached the DC.
// The warning stays until none has come for LockoutQuiet, through the good
// logons that reset the DC's count in between: the stale client is still
// there and tries again at its next scan.
func lockoutPressure(th Thresholds, o Observation, h History, now time.Time, loc *time.Location) *Warning {
	if th.LockoutRise <= 0 {
		return nil
	}
	var before *Warning
	for i := range h.Before {
		if h.Before[i].Kind == LockoutPressure && (h.Before[i].Subject == o.Account || o.Account == "") {
			before = &h.Before[i]
		}
	}
	if o.Account == "" {
		// The directory did not answer this time: no evidence either way,
		// the warning stands for its quiet time as it was.
		if before == nil || now.Sub(evTime(before.Evidence, evLastForeign)) >= th.LockoutQuiet {
			return nil
		}
		w := *before
		return &w
	}
	f := seenForeign(th, o, h)
	total := 0
	if before != nil {
		n, _ := evInt(before.Evidence, evForeignCount)
		total = int(n)
	}
	switch {
	case f != nil:
		total += f.N
	case before != nil:
		last := evTime(before.Evidence, evLastForeign)
		if last.IsZero() || now.Sub(last) >= th.LockoutQuiet {
			return nil
		}
		sure, _ := before.Evidence[evForeignTimeSure].(bool)
		f = &foreign{At: last, Sure: sure}
	default:
		return nil
	}
	return lockoutWarning(th, o, h, f, total, loc)
}

// lockoutWarning is the warning for total bad passwords not ours (f: the
// latest seen, or the one the warning before last saw).
func lockoutWarning(th Thresholds, o Observation, h History, f *foreign, total int, loc *time.Location) *Warning {
	at := f.At.In(loc).Format("2 Jan 15:04:05")
	w := &Warning{Kind: LockoutPressure, Subject: o.Account, KyoceraCode: code(scanwarden.CauseAccountLocked),
		Headline: lockoutHeadline(th, o, h, f, total, at),
		Fix: fmt.Sprintf("find what sends it — LDAP does not record which machine, the domain controllers' Security log does: "+
			"event 4625 or 4771/4776 for %s around %s (on the PDC emulator, which every bad password reaches) names the workstation or address; "+
			"give it the current password or remove it", o.Account, at),
		Evidence: smbcheck.Evidence{"bad_pwd_count": o.BadPwdCount, evForeignCount: total,
			evLastForeign: f.At.UTC().Format(time.RFC3339Nano), evForeignTimeSure: f.Sure,
			"quiet_until": f.At.Add(th.LockoutQuiet).UTC().Format(time.RFC3339), "lockout_threshold": o.LockoutThreshold}}
	if h.Account != nil {
		w.Evidence["previous_bad_pwd_count"] = h.Account.BadPwdCount
	}
	if !o.LastBadPassword.IsZero() {
		w.Evidence["last_bad_password"] = o.LastBadPassword.UTC().Format(time.RFC3339Nano)
	}
	if f.Unsure > 0 {
		w.Evidence["own_logons_unknown_outcome"] = f.Unsure
	}
	return w
}

// lockoutHeadline says how many bad passwords came, when (at), and what
// LDAP cannot tell.
func lockoutHeadline(th Thresholds, o Observation, h History, f *foreign, total int, at string) string {
	var head string
	if f.N > 0 {
		head = fmt.Sprintf("%s had %d bad password%s since the last check (badPwdCount %d → %d", o.Account, f.N, plural(f.N),
			h.Account.BadPwdCount, o.BadPwdCount)
		if o.LockoutThreshold > 0 {
			head += fmt.Sprintf(" of %d, locked at %d", o.LockoutThreshold, o.LockoutThreshold)
		}
		head += ") that scanwarden did not send"
	} else {
		head = fmt.Sprintf("%s had %d bad password%s that scanwarden did not send", o.Account, total, plural(total))
	}
	if f.Sure {
		head += ", the last at " + at
	} else {
		head += fmt.Sprintf(" before %s (the DC's last bad password was scanwarden's own: when the others came it does not tell)", at)
	}
	head += "; LDAP does not say from where"
	if f.Unsure > 0 {
		head += fmt.Sprintf("; %d of scanwarden's own logons in that span have no known outcome and may be among them", f.Unsure)
	}
	quiet := fmt.Sprintf("; kept until none comes for %s", fmtSpan(th.LockoutQuiet))
	return head + ": something with a stale password keeps trying" + quiet
}

// fmtSpan says a configured span: "8h", "90m", "1d12h".
func fmtSpan(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
