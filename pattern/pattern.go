// Package pattern explains intermittent failures from history: a
// destination's (or a file server's) recorded checks, the MFPs' own 1102
// reports and the incident's flaps over a window (14 days by default),
// turned into one short sentence with its counts, or "no pattern yet".
//
// It is a pure function of the history and the clock it is given: no I/O,
// no SQL. Each rule speaks only from evidence in proportion to its claim:
// a time of day needs failures on several days concentrated far beyond
// what the spread of the checks explains (a binomial tail, corrected for
// the windows tried), so failures at random say nothing.
package pattern

import (
	"fmt"
	"sort"
	"time"
)

// DefaultWindow is the span of history a sentence speaks about.
const DefaultWindow = 14 * 24 * time.Hour

// The evidence each rule needs before it says anything.
const (
	// MinClusterFailures failed checks, on MinClusterDays different days
	// (MinWeekdayDates dates of the named weekdays), before a time of day
	// or a weekday is named.
	MinClusterFailures = 5
	MinClusterDays     = 3
	MinWeekdayDates    = 2
	// ClusterShare of the failures must fall in the named span.
	ClusterShare = 0.8
	// ClusterSignificance bounds the chance (corrected for every span
	// tried) that checks failing at random would crowd into the span.
	ClusterSignificance = 0.001
	// MinSpells separate spells of failure, passing in between, make a
	// destination intermittent.
	MinSpells = 3
	// MinLimitFailures failures with a session count before the count is
	// blamed.
	MinLimitFailures = 2
	// RestartGrace: a failure this soon after the server started counts
	// as one that came with the restart.
	RestartGrace = 15 * time.Minute
	// MinDeviceOnly of the MFPs' reports while the checks pass.
	MinDeviceOnly = 2
)

// Check is one recorded check.
type Check struct {
	At time.Time
	OK bool
	// Cause is the check's verdict cause ("connection-limit", …).
	Cause string
	// Sessions is how many sessions (or connections to the share) the
	// server held at the check, read with the reading account; -1 when not
	// known.
	Sessions int
	// Limit is the most it allows (a share's max connections, 20 for a
	// Windows client edition); 0 when not known. LimitName says whose limit
	// it is ("the Windows 11 limit", "the share's max connections").
	Limit     int
	LimitName string
	// ServerStart is when the server last started (SMB2 negotiate's
	// ServerStartTime, or its event log); zero when not known.
	ServerStart time.Time
}

// DeviceReport is one send failure an MFP reported (SNMP job log, trap,
// mail).
type DeviceReport struct {
	At      time.Time
	Device  string
	Address string
	Code    string // "1102"
}

// History is what a sentence is made of. Checks and Reports may come in
// any order; those outside (Now-Window, Now] are ignored.
type History struct {
	Checks  []Check
	Reports []DeviceReport
	// Restarts are starts of the server known from elsewhere (its event
	// log's 6005), besides the checks' ServerStart.
	Restarts []time.Time
	// Flaps counts the incident's reopenings in the window.
	Flaps  int
	Window time.Duration // 0: DefaultWindow
	Now    time.Time
	// Loc is the time zone hours and weekdays are told in (nil: UTC).
	Loc *time.Location
}

// Kind names a finding.
type Kind string

// Finding kinds.
const (
	KindTimeOfDay    Kind = "time-of-day"
	KindWeekday      Kind = "weekday"
	KindSessionLimit Kind = "session-limit"
	KindRestart      Kind = "restart"
	KindUptime       Kind = "uptime"
	KindDeviceOnly   Kind = "device-only"
)

// Finding is one pattern, told with its counts.
type Finding struct {
	Kind Kind   `json:"kind"`
	Text string `json:"text"`
}

// Explanation is the history's sentence and what it is made of.
type Explanation struct {
	Checks int `json:"checks"`
	Failed int `json:"failed"`
	Scans  int `json:"scans"` // the MFPs' failure reports
	// Spells counts separate runs of failed checks; Intermittent is set
	// from MinSpells of them, passing in between. It describes, it does
	// not explain: random failures are intermittent too.
	Spells       int       `json:"spells"`
	Intermittent bool      `json:"intermittent"`
	Findings     []Finding `json:"findings,omitempty"`
	Sentence     string    `json:"sentence"`
}

// NoPattern ends a sentence that found nothing to say.
const NoPattern = "no pattern yet"

// Has reports whether a finding of kind was made.
func (e Explanation) Has(k Kind) bool {
	for _, f := range e.Findings {
		if f.Kind == k {
			return true
		}
	}
	return false
}

// Explain turns h into its sentence.
func Explain(h History) Explanation {
	if h.Window <= 0 {
		h.Window = DefaultWindow
	}
	if h.Loc == nil {
		h.Loc = time.UTC
	}
	from := h.Now.Add(-h.Window)
	checks, reports := h.inWindow(from)
	var e Explanation
	e.Checks = len(checks)
	e.Scans = len(reports)
	for _, c := range checks {
		if !c.OK {
			e.Failed++
		}
	}
	span := days(h.Window)
	switch {
	case e.Checks == 0 && e.Scans == 0:
		e.Sentence = fmt.Sprintf("no checks in %s: %s", span, NoPattern)
		return e
	case e.Scans == 0:
		e.Sentence = fmt.Sprintf("failed %d of %d checks in %s", e.Failed, e.Checks, span)
	default:
		e.Sentence = fmt.Sprintf("failed %d of %d checks and %d %s in %s", e.Failed, e.Checks, e.Scans, plural(e.Scans, "scan", "scans"), span)
	}
	e.Spells = spells(checks)
	if e.Spells >= MinSpells {
		e.Intermittent = true
		e.Sentence += fmt.Sprintf(", intermittently: in %d separate spells, passing in between", e.Spells)
		if h.Flaps > 0 {
			e.Sentence += fmt.Sprintf(" (the incident reopened %d %s)", h.Flaps, plural(h.Flaps, "time", "times"))
		}
	}
	restarts := serverStarts(checks, h.Restarts, from, h.Now)
	for _, rule := range []func() *Finding{
		func() *Finding { return sessionLimit(checks) },
		func() *Finding { return timeOfDay(checks, reports, h.Loc) },
		func() *Finding { return weekday(checks, h.Loc) },
		func() *Finding { return restart(checks, restarts, h.Loc, span) },
		func() *Finding { return deviceOnly(checks, reports, h.Loc) },
	} {
		if f := rule(); f != nil {
			e.Findings = append(e.Findings, *f)
		}
	}
	if len(e.Findings) == 0 {
		e.Sentence += ": " + NoPattern
		return e
	}
	for _, f := range e.Findings {
		e.Sentence += "; " + f.Text
	}
	return e
}

// inWindow returns h's checks and reports in (from, h.Now], each in time
// order.
func (h History) inWindow(from time.Time) ([]Check, []DeviceReport) {
	in := func(t time.Time) bool { return t.After(from) && !t.After(h.Now) }
	var checks []Check
	for _, c := range h.Checks {
		if in(c.At) {
			checks = append(checks, c)
		}
	}
	sort.SliceStable(checks, func(i, j int) bool { return checks[i].At.Before(checks[j].At) })
	var reports []DeviceReport
	for _, r := range h.Reports {
		if in(r.At) {
			reports = append(reports, r)
		}
	}
	sort.SliceStable(reports, func(i, j int) bool { return reports[i].At.Before(reports[j].At) })
	return checks, reports
}

// spells counts the runs of failed checks.
func spells(checks []Check) int {
	n, prevFail := 0, false
	for _, c := range checks {
		if !c.OK && !prevFail {
			n++
		}
		prevFail = !c.OK
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		n := int(d / (24 * time.Hour))
		return fmt.Sprintf("%d %s", n, plural(n, "day", "days"))
	}
	return roughly(d)
}

// roughly writes d in its largest whole unit.
func roughly(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	case d >= 2*time.Minute:
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
	return fmt.Sprintf("%d seconds", int(d/time.Second))
}

func clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Hour)%24, int(d/time.Minute)%60)
}

func percent(p float64) string { return fmt.Sprintf("%.0f%%", p*100) }
