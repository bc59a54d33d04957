// Package warning names what will fail before it does: a destination
// whose check passes today but whose scan account's password or account
// expires within days, whose folder's volume is filling up, or whose
// account is being hammered with a wrong password towards its lockout.
// A warning is a "will fail" state beside pass and fail: it never changes a
// check's verdict, exit status or incident.
//
// Everything here is pure: Observe reads what a check saw from its report
// (the ad step's account evidence, the write step's free_bytes), Assess
// judges it against the thresholds and the history the store keeps, and
// Groups folds the destinations' warnings into what the admin must do once
// (one warning per account, or per volume, however many destinations and
// MFPs use it).
package warning

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/smbclient"
)

// Kind is what will fail. Stable: part of the JSON, metric and webhook
// contracts.
type Kind string

// The kinds.
const (
	PasswordExpiresSoon Kind = "password-expires-soon"
	AccountExpiresSoon  Kind = "account-expires-soon"
	DiskFilling         Kind = "disk-filling"
	LockoutPressure     Kind = "lockout-pressure"
	PreviousPassword    Kind = "previous-password"
)

// Kinds lists every kind, in the order reports show them.
var Kinds = []Kind{PreviousPassword, PasswordExpiresSoon, AccountExpiresSoon, LockoutPressure, DiskFilling}

// Thresholds say when a warning is raised; 0 turns that one off.
type Thresholds struct {
	PasswordDays int // the password expires within this many days
	AccountDays  int // the account expires within this many days
	// DiskPercent and DiskFloorBytes: free space below either is said at
	// once, whatever the trend.
	DiskPercent    int
	DiskFloorBytes int64
	// DiskDays: the trend of the last checks' free space runs out within
	// this many days.
	DiskDays int
	// LockoutRise: this many bad passwords or more between two checks that
	// scanwarden did not send.
	LockoutRise int
	// LockoutQuiet: lockout pressure stays raised until no bad password
	// scanwarden did not send has come for this long.
	LockoutQuiet time.Duration
	// OldPasswordPeriod: how long the DC still accepts an account's
	// previous password over NTLM after a change (Windows' and Samba's
	// "old password allowed period"); 0 turns previous-password off.
	OldPasswordPeriod time.Duration
}

// DefaultThresholds are the [warnings] defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{PasswordDays: 14, AccountDays: 14, DiskPercent: 5, DiskFloorBytes: 500 << 20, DiskDays: 14, LockoutRise: 1,
		LockoutQuiet: 8 * time.Hour, OldPasswordPeriod: time.Hour}
}

// Warning is one destination's "will fail": what, about which account or
// volume (Subject), when (Due: the expiry, or the projected day the volume
// is full; zero when not dated) and the panel code the MFP will show then.
// Headline says it about the subject ("KYOLAB\scan's password expires on
// 8 Dec (6 days)"); Fix what to do, once, for every destination it touches.
type Warning struct {
	Kind        Kind              `json:"kind"`
	Subject     string            `json:"subject"`
	Headline    string            `json:"headline"`
	Fix         string            `json:"fix"`
	Due         time.Time         `json:"due,omitzero"`
	KyoceraCode string            `json:"kyocera_code"`
	Evidence    smbcheck.Evidence `json:"evidence"`
}

// Summary is the warning as said about one destination.
func (w Warning) Summary() string {
	return fmt.Sprintf("%s: this destination will fail with %s", w.Headline, w.KyoceraCode)
}

// Key identifies what the admin must do once: the kind and its subject.
func (w Warning) Key() string { return string(w.Kind) + " " + strings.ToLower(w.Subject) }

// Observation is what one check saw that warnings are made of.
type Observation struct {
	At     time.Time // when the check started
	Passed bool      // its verdict was ok
	Device string    // the MFP whose destination was checked ("" when none)
	// Kerberos: the check logged on over Kerberos, which accepts only the
	// account's current password.
	Kerberos bool
	// The account as the directory answered before the replay ("" when the
	// check did not ask it).
	Account          string // DOMAIN\sam as the DC spells it
	PasswordExpires  time.Time
	AccountExpires   time.Time
	BadPwdCount      int
	LastBadPassword  time.Time
	LockoutThreshold int
	PasswordLastSet  time.Time // pwdLastSet (zero: not known)
	// The destination's volume: \\host\share, its free and total bytes
	// (HasFree false when the write step did not measure them).
	Volume  string
	HasFree bool
	Free    uint64
	Total   uint64 // 0: not known
}

// AccountKey is the observation's account as the ledger keys it.
func (o Observation) AccountKey() string {
	if o.Account == "" {
		return ""
	}
	dom, sam, ok := strings.Cut(o.Account, `\`)
	if !ok {
		return smbclient.AccountKey("", o.Account)
	}
	return smbclient.AccountKey(dom, sam)
}

// Observe reads a report: the ad step's account evidence and the write
// step's free space.
func Observe(rep smbcheck.Report) Observation {
	o := Observation{At: rep.Started, Passed: rep.OK() && !rep.Interrupted}
	o.Volume = Volume(rep.Target.Host, rep.Target.Share)
	if s := rep.Step(smbcheck.StepAD); s != nil && s.Status != smbcheck.StatusSkipped {
		ev := s.Evidence
		if who, ok := ev["account"].(string); ok && who != "" && who != "local to the server" {
			o.Account = who
			o.PasswordExpires = evTime(ev, "password_expires")
			o.AccountExpires = evTime(ev, "account_expires")
			o.LastBadPassword = evTime(ev, "last_bad_password")
			o.PasswordLastSet = evTime(ev, "password_last_set")
			n, _ := evInt(ev, "bad_pwd_count")
			th, _ := evInt(ev, "lockout_threshold")
			o.BadPwdCount, o.LockoutThreshold = int(n), int(th)
		}
	}
	if s := rep.Step(smbcheck.StepSession); s != nil && s.Status == smbcheck.StatusOK {
		k, _ := s.Evidence["kerberos"].(string)
		o.Kerberos = k == string(scanwarden.CauseOK)
	}
	if s := rep.Step(smbcheck.StepWrite); s != nil {
		if n, ok := evInt(s.Evidence, "free_bytes"); ok && n >= 0 {
			o.HasFree, o.Free = true, uint64(n)
			if t, ok := evInt(s.Evidence, "total_bytes"); ok && t > 0 {
				o.Total = uint64(t)
			}
		}
	}
	return o
}

// Volume names a destination's volume: the share, as the panel shows it,
// lower-cased (every folder of one share is on one volume as far as SMB
// says).
func Volume(host, share string) string {
	if host == "" || share == "" {
		return ""
	}
	return strings.ToLower(`\\` + strings.Trim(host, "[]") + `\` + share)
}

// evTime reads an RFC 3339 time from evidence (zero when absent).
func evTime(ev smbcheck.Evidence, k string) time.Time {
	s, _ := ev[k].(string)
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// evInt reads a number from evidence, as a live report holds it (Go
// integer types) or as one read back from JSON holds it (float64).
func evInt(ev smbcheck.Evidence, k string) (int64, bool) {
	switch v := ev[k].(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case uint64:
		return int64(min(v, math.MaxInt64)), true
	case float64:
		return int64(v), true
	}
	return 0, false
}

// Sample is one measurement of a volume's free space.
type Sample struct {
	At   time.Time
	Free uint64
}

// OwnFailure is a logon of the account that scanwarden sent and that
// failed, or whose outcome nobody saw (Unknown): from At (before its
// AUTHENTICATE left) to Until (when the answer came; zero when unknown).
type OwnFailure struct {
	At, Until time.Time
	Unknown   bool
}

// Proven is what the ledger knows of the stored password that this check's
// logon proved: when it was last known to be the account's current
// password (zero: never known).
type Proven struct {
	Current time.Time
}

// Seen is the account as a destination's previous check saw it.
type Seen struct {
	At              time.Time
	BadPwdCount     int
	LastBadPassword time.Time
}

// History is what the store remembers for one check's judgement.
type History struct {
	// Volume: earlier samples of the destination's volume (any
	// destination on it), oldest first.
	Volume []Sample
	// Account: the account as this destination's previous check saw it
	// (nil: never, or another account).
	Account *Seen
	// OwnFailures: logons of the account scanwarden sent since
	// Account.At that failed or whose outcome is not known (kept beside
	// the ledger for as long as lockout pressure can need them).
	OwnFailures []OwnFailure
	// Proven: the stored password this check logged on with (nil: the
	// check proved none).
	Proven *Proven
	// ScanBytes: the usual size of a scan from the destination's device
	// (the median of the ones it sent lately; 0: not known).
	ScanBytes int64
	// Before: the destination's warnings before this check.
	Before []Warning
}

// Assess judges one observation. A check that did not pass clears
// nothing: it keeps the warnings it cannot confirm gone ("cleared when the
// cause goes and the next check passed").
func Assess(th Thresholds, o Observation, h History, now time.Time, loc *time.Location) []Warning {
	if loc == nil {
		loc = time.Local
	}
	var out []Warning
	add := func(w *Warning) {
		if w != nil {
			out = append(out, *w)
		}
	}
	add(passwordSoon(th, o, now, loc))
	add(accountSoon(th, o, now, loc))
	add(previousPassword(th, o, h, loc))
	add(lockoutPressure(th, o, h, now, loc))
	add(diskFilling(th, o, h, now, loc))
	if !o.Passed {
		for _, b := range h.Before {
			if b.Kind == PreviousPassword && !b.Due.IsZero() && !now.Before(b.Due) {
				continue // the DC no longer accepts it: that is the failure now, not a warning
			}
			if !slices.ContainsFunc(out, func(w Warning) bool { return w.Kind == b.Kind }) {
				out = append(out, b)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return slices.Index(Kinds, out[i].Kind) < slices.Index(Kinds, out[j].Kind) })
	return out
}

// dueWithin: x is known, still ahead of now, and at most n days away (n of
// 0 or less: never).
func dueWithin(x, now time.Time, n int) bool {
	return n > 0 && !x.IsZero() && x.After(now) && x.Sub(now) <= days(n)
}

func passwordSoon(th Thresholds, o Observation, now time.Time, loc *time.Location) *Warning {
	x := o.PasswordExpires
	if o.Account == "" || !dueWithin(x, now, th.PasswordDays) {
		return nil
	}
	return &Warning{Kind: PasswordExpiresSoon, Subject: o.Account, Due: x, KyoceraCode: code(scanwarden.CausePasswordExpired),
		Headline: fmt.Sprintf("%s's password expires on %s (%s)", o.Account, fmtDay(x, now, loc), left(x.Sub(now))),
		Fix: fmt.Sprintf("set a password that does not expire for this account (a fine-grained password policy for %s), "+
			"or plan the change on the MFPs with `scanwarden export addressbook`: set the new password and enter it on each of them the same day", o.Account),
		Evidence: smbcheck.Evidence{"password_expires": x.UTC().Format(time.RFC3339)}}
}

func accountSoon(th Thresholds, o Observation, now time.Time, loc *time.Location) *Warning {
	x := o.AccountExpires
	if o.Account == "" || !dueWithin(x, now, th.AccountDays) {
		return nil
	}
	return &Warning{Kind: AccountExpiresSoon, Subject: o.Account, Due: x, KyoceraCode: code(scanwarden.CauseAccountExpired),
		Headline: fmt.Sprintf("the account %s expires on %s (%s)", o.Account, fmtDay(x, now, loc), left(x.Sub(now))),
		Fix: fmt.Sprintf("extend or clear its expiry date (Active Directory Users and Computers → Account → Account expires, or Set-ADAccountExpiration %s), "+
			"or move the MFPs to a scan account that does not expire with `scanwarden export addressbook`", samOf(o.Account)),
		Evidence: smbcheck.Evidence{"account_expires": x.UTC().Format(time.RFC3339)}}
}

func code(c scanwarden.Cause) string { return c.Info().KyoceraCode }

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

func samOf(who string) string {
	if _, sam, ok := strings.Cut(who, `\`); ok {
		return sam
	}
	return who
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// left says a time span ahead: "6 days", "20 hours", "35 minutes".
func left(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d.Hours()/24))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	m := max(1, int(d.Minutes()))
	return fmt.Sprintf("%d minute%s", m, plural(m))
}

// fmtDay shows a date: "8 Dec", with the year when it is not this year's.
func fmtDay(t, now time.Time, loc *time.Location) string {
	t = t.In(loc)
	if t.Year() == now.In(loc).Year() {
		return t.Format("2 Jan")
	}
	return t.Format("2 Jan 2006")
}

// fmtWhen is fmtDay with the hour when it is less than two days away.
func fmtWhen(t, now time.Time, loc *time.Location) string {
	if t.Sub(now) < 48*time.Hour {
		return t.In(loc).Format("2 Jan 15:04")
	}
	return fmtDay(t, now, loc)
}

// fmtBytes: "7.5 MiB", "1.2 GiB".
func fmtBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
