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

	"github.com/scanwarden/scanwarden/smbcheck"
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
)

// Kinds lists every kind, in the order reports show them.
var Kinds = []Kind{PasswordExpiresSoon, AccountExpiresSoon, LockoutPressure, DiskFilling}

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
}

// DefaultThresholds are the [warnings] defaults.
func DefaultThresholds() Thresholds {
	return Thresholds{PasswordDays: 14, AccountDays: 14, DiskPercent: 5, DiskFloorBytes: 500 << 20, DiskDays: 14, LockoutRise: 1}
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
	// The account as the directory answered before the replay ("" when the
	// check did not ask it).
	Account          string // DOMAIN\sam as the DC spells it
	PasswordExpires  time.Time
	AccountExpires   time.Time
	BadPwdCount      int
	LastBadPassword  time.Time
	LockoutThreshold int
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
		return smbcheck.AccountKey("", o.Account)
	}
	return smbcheck.AccountKey(dom, sam)
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
			n, _ := evInt(ev, "bad_pwd_count")
			th, _ := evInt(ev, "lockout_threshold")
			o.BadPwdCount, o.LockoutThreshold = int(n), int(th)
		}
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
	// Account.At that failed or whose outcome is not known (the ledger).
	OwnFailures int
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
	add(lockoutPressure(th, o, h, loc))
	add(diskFilling(th, o, h, now, loc))
	if !o.Passed {
		for _, b := range h.Before {
			if !slices.ContainsFunc(out, func(w Warning) bool { return w.Kind == b.Kind }) {
				out = append(out, b)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return slices.Index(Kinds, out[i].Kind) < slices.Index(Kinds, out[j].Kind) })
	return out
}

func passwordSoon(th Thresholds, o Observation, now time.Time, loc *time.Location) *Warning {
	x := o.PasswordExpires
	if th.PasswordDays <= 0 || o.Account == "" || x.IsZero() || !x.After(now) || x.Sub(now) > days(th.PasswordDays) {
		return nil
	}
	return &Warning{Kind: PasswordExpiresSoon, Subject: o.Account, Due: x, KyoceraCode: code(smbcheck.CausePasswordExpired),
		Headline: fmt.Sprintf("%s's password expires on %s (%s)", o.Account, fmtDay(x, now, loc), left(x.Sub(now))),
		Fix: fmt.Sprintf("set a password that does not expire for this account (a fine-grained password policy for %s), "+
			"or plan the change on the MFPs with `scanwarden export addressbook`: set the new password and enter it on each of them the same day", o.Account),
		Evidence: smbcheck.Evidence{"password_expires": x.UTC().Format(time.RFC3339)}}
}

func accountSoon(th Thresholds, o Observation, now time.Time, loc *time.Location) *Warning {
	x := o.AccountExpires
	if th.AccountDays <= 0 || o.Account == "" || x.IsZero() || !x.After(now) || x.Sub(now) > days(th.AccountDays) {
		return nil
	}
	return &Warning{Kind: AccountExpiresSoon, Subject: o.Account, Due: x, KyoceraCode: code(smbcheck.CauseAccountExpired),
		Headline: fmt.Sprintf("the account %s expires on %s (%s)", o.Account, fmtDay(x, now, loc), left(x.Sub(now))),
		Fix: fmt.Sprintf("extend or clear its expiry date (Active Directory Users and Computers → Account → Account expires, or Set-ADAccountExpiration %s), "+
			"or move the MFPs to a scan account that does not expire with `scanwarden export addressbook`", samOf(o.Account)),
		Evidence: smbcheck.Evidence{"account_expires": x.UTC().Format(time.RFC3339)}}
}

// lockoutPressure: the DC counted bad passwords between this
// destination's previous check and this one that scanwarden did not send.
func lockoutPressure(th Thresholds, o Observation, h History, loc *time.Location) *Warning {
	prev := h.Account
	// badPasswordTime reaches us in whole seconds: a bad password in the
	// same second as the previous check may have come just after it.
	if th.LockoutRise <= 0 || o.Account == "" || prev == nil || o.LastBadPassword.IsZero() ||
		o.LastBadPassword.Before(prev.At.Truncate(time.Second)) {
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
	others := rise - h.OwnFailures
	if others < th.LockoutRise {
		return nil
	}
	at := o.LastBadPassword.In(loc).Format("2 Jan 15:04:05")
	head := fmt.Sprintf("%s had %d bad password%s since the last check (badPwdCount %d → %d", o.Account, others, plural(others), prev.BadPwdCount, o.BadPwdCount)
	if o.LockoutThreshold > 0 {
		head += fmt.Sprintf(" of %d, locked at %d", o.LockoutThreshold, o.LockoutThreshold)
	}
	head += fmt.Sprintf(", the last at %s) that scanwarden did not send: something with a stale password keeps trying", at)
	return &Warning{Kind: LockoutPressure, Subject: o.Account, KyoceraCode: code(smbcheck.CauseAccountLocked), Headline: head,
		Fix: fmt.Sprintf("find what sends it — LDAP does not record which machine, the domain controllers' Security log does: "+
			"event 4625 or 4771/4776 for %s around %s (on the PDC emulator, which every bad password reaches) names the workstation or address; "+
			"give it the current password or remove it", o.Account, at),
		Evidence: smbcheck.Evidence{"bad_pwd_count": o.BadPwdCount, "previous_bad_pwd_count": prev.BadPwdCount,
			"own_failures": h.OwnFailures, "last_bad_password": o.LastBadPassword.UTC().Format(time.RFC3339),
			"lockout_threshold": o.LockoutThreshold}}
}

// diskFilling: free space under a floor (said at once), or the trend of
// the samples since the space last grew running out within DiskDays.
func diskFilling(th Thresholds, o Observation, h History, now time.Time, loc *time.Location) *Warning {
	if !o.HasFree || o.Volume == "" {
		return nil
	}
	ev := smbcheck.Evidence{"free_bytes": o.Free}
	if o.Total > 0 {
		ev["total_bytes"] = o.Total
	}
	free := fmtBytes(o.Free)
	if o.Total > 0 {
		free += fmt.Sprintf(" of %s (%.1f %%)", fmtBytes(o.Total), 100*float64(o.Free)/float64(o.Total))
	}
	w := &Warning{Kind: DiskFilling, Subject: o.Volume, KyoceraCode: code(smbcheck.CauseDiskFull), Evidence: ev,
		Fix: "free space on the volume (move or delete old scans), grow it, or raise the account's quota"}
	floor := th.DiskFloorBytes > 0 && o.Free < uint64(th.DiskFloorBytes)
	pct := th.DiskPercent > 0 && o.Total > 0 && float64(o.Free)*100 < float64(o.Total)*float64(th.DiskPercent)
	if th.DiskDays > 0 {
		if full, rate, n, ok := project(append(slices.Clone(h.Volume), Sample{At: o.At, Free: o.Free})); ok && full.Sub(now) <= days(th.DiskDays) {
			w.Due = full
			ev["projected_full"] = full.UTC().Format(time.RFC3339)
			ev["bytes_per_day"] = int64(rate * 86400)
			ev["samples"] = n
			w.Headline = fmt.Sprintf("%s has %s free and is filling by %s a day: full around %s (%s, from the last %d checks)",
				o.Volume, free, fmtBytes(uint64(rate*86400)), fmtWhen(full, now, loc), left(full.Sub(now)), n)
			return w
		}
	}
	if floor || pct {
		what := fmt.Sprintf("below %d %%", th.DiskPercent)
		if floor {
			what = "below " + fmtBytes(uint64(th.DiskFloorBytes))
		}
		w.Headline = fmt.Sprintf("%s has only %s free (%s): the next large scans will not fit", o.Volume, free, what)
		return w
	}
	return nil
}

// project fits a line through the samples since the free space last grew
// (space freed restarts the trend) and returns when it reaches zero, the
// rate in bytes per second and how many samples it used; at least three
// samples over a falling line.
func project(s []Sample) (full time.Time, rate float64, n int, ok bool) {
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i].Free > s[i-1].Free {
			start = i
		}
	}
	s = s[start:]
	if len(s) < 3 || !s[len(s)-1].At.After(s[0].At) {
		return time.Time{}, 0, 0, false
	}
	t0 := s[0].At
	var sx, sy, sxx, sxy float64
	for _, p := range s {
		x := p.At.Sub(t0).Seconds()
		y := float64(p.Free)
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	m := float64(len(s))
	den := m*sxx - sx*sx
	if den <= 0 {
		return time.Time{}, 0, 0, false
	}
	slope := (m*sxy - sx*sy) / den // bytes per second, negative while filling
	if slope >= 0 {
		return time.Time{}, 0, 0, false
	}
	last := s[len(s)-1]
	secs := float64(last.Free) / -slope
	if secs > 100*365*86400 {
		return time.Time{}, 0, 0, false
	}
	return last.At.Add(time.Duration(secs * float64(time.Second))), -slope, len(s), true
}

func code(c smbcheck.Cause) string { return c.Info().KyoceraCode }

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
