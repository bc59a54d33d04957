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
	"math"
	"sort"
	"strings"
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

// sessionLimit: the failures coincide with the session count at its
// maximum (the limit when known, else the highest count seen): most checks
// at the maximum failed, most below it passed, and most failures with a
// count were at it (a count read a moment after the check may have moved:
// a few checks on the wrong side do not hide the rule). Without counts:
// the server refused another connection again and again.
func sessionLimit(checks []Check) *Finding {
	var failures, limitRefusals int
	max, limit := -1, 0
	name := ""
	for _, c := range checks {
		if !c.OK {
			failures++
			if c.Cause == "connection-limit" {
				limitRefusals++
			}
		}
		if c.Sessions < 0 {
			continue
		}
		if c.Sessions > max {
			max = c.Sessions
		}
		if c.Limit > 0 {
			limit, name = c.Limit, c.LimitName
		}
	}
	top := max
	if limit > 0 {
		top = limit
	}
	var failedAt, okAt, failedBelow, okBelow int
	okMax := -1
	for _, c := range checks {
		switch {
		case c.Sessions < 0:
		case c.Sessions >= top && !c.OK:
			failedAt++
		case c.Sessions >= top:
			okAt++
		case !c.OK:
			failedBelow++
		default:
			okBelow++
			okMax = max0(okMax, c.Sessions)
		}
	}
	failed := failedAt + failedBelow
	atRate := rate(failedAt, failedAt+okAt)
	belowRate := rate(failedBelow, failedBelow+okBelow)
	if top > 0 && failedAt >= MinLimitFailures && float64(failedAt) >= ClusterShare*float64(failed) &&
		atRate >= ClusterShare && belowRate <= 1-ClusterShare {
		what := fmt.Sprint(top)
		if limit > 0 {
			what = fmt.Sprintf("%d of %d", top, limit)
		}
		text := fmt.Sprintf("fails whenever %s sessions are open (%d of %d failures with a count)", what, failedAt, failed)
		if failedAt < failed || okAt > 0 {
			text = fmt.Sprintf("fails when %s sessions are open (%d of %d failures with a count came then; %d of %d checks then failed)",
				what, failedAt, failed, failedAt, failedAt+okAt)
		}
		if name != "" {
			text += ": " + name
		} else {
			text += ": its session limit"
		}
		if okMax >= 0 {
			text += fmt.Sprintf("; passing checks saw at most %d", okMax)
		}
		return &Finding{KindSessionLimit, text}
	}
	if limitRefusals >= MinLimitFailures {
		return &Finding{KindSessionLimit, fmt.Sprintf("%d of %d failures were the server refusing another connection: its session or connection limit is reached at times (other PCs, backup software)",
			limitRefusals, failures)}
	}
	return nil
}

func rate(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

func max0(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// timeOfDay: failed checks crowd into a part of the day that the checks'
// own spread does not explain. The MFPs' reports are counted beside, not
// in the test: scans happen in office hours anyway.
func timeOfDay(checks []Check, reports []DeviceReport, loc *time.Location) *Finding {
	const slots = 48 // half hours
	slot := func(t time.Time) int { l := t.In(loc); return l.Hour()*2 + l.Minute()/30 }
	c, ok := cluster(checks, loc, slots, 16, MinClusterDays, slot)
	if !ok {
		return nil
	}
	start := time.Duration(c.start) * 30 * time.Minute
	end := time.Duration((c.start+c.width)%slots) * 30 * time.Minute
	text := fmt.Sprintf("%s between %s and %s", c.lead(), clock(start), clock(end))
	inReports := 0
	for _, r := range reports {
		if c.covers(slot(r.At), slots) {
			inReports++
		}
	}
	if len(reports) > 0 {
		text += fmt.Sprintf(" (and %d of %d scans the MFPs reported failed)", inReports, len(reports))
	}
	text += fmt.Sprintf(", where %s of the checks fall", percent(c.p))
	if night(c.start, c.width) {
		text += " — a nightly job on the server: backup?"
	}
	return &Finding{KindTimeOfDay, text}
}

// weekday: failed checks crowd into one or two days of the week.
func weekday(checks []Check, loc *time.Location) *Finding {
	c, ok := cluster(checks, loc, 7, 2, MinWeekdayDates, func(t time.Time) int { return int(t.In(loc).Weekday()) })
	if !ok {
		return nil
	}
	day := time.Weekday(c.start).String() + "s"
	if c.width == 2 {
		day = time.Weekday(c.start).String() + "s and " + time.Weekday((c.start+1)%7).String() + "s"
	}
	return &Finding{KindWeekday, fmt.Sprintf("%s on %s, where %s of the checks fall", c.lead(), day, percent(c.p))}
}

type clustered struct {
	start, width int
	k, failed    int
	p            float64
}

func (c clustered) covers(bin, n int) bool { return (bin-c.start+n)%n < c.width }

func (c clustered) lead() string {
	if c.k == c.failed {
		return fmt.Sprintf("every failure (%d)", c.k)
	}
	return fmt.Sprintf("%d of %d failures", c.k, c.failed)
}

// cluster finds the narrowest circular span of bins (at most maxWidth)
// holding ClusterShare of the failed checks, and says whether checks
// failing at random would put that many there only with a chance below
// ClusterSignificance (Bonferroni over every span tried).
func cluster(checks []Check, loc *time.Location, n, maxWidth, minDays int, bin func(time.Time) int) (clustered, bool) {
	all := make([]int, n)
	fail := make([]int, n)
	failed := 0
	for _, c := range checks {
		b := bin(c.At)
		all[b]++
		if !c.OK {
			fail[b]++
			failed++
		}
	}
	if failed < MinClusterFailures {
		return clustered{}, false
	}
	need := int(math.Ceil(ClusterShare * float64(failed)))
	tries := float64(n * maxWidth)
	for w := 1; w <= maxWidth && w < n; w++ {
		best := clustered{start: -1}
		for s := 0; s < n; s++ {
			k, m := 0, 0
			for i := 0; i < w; i++ {
				k += fail[(s+i)%n]
				m += all[(s+i)%n]
			}
			if k < need || k <= best.k {
				continue
			}
			best = clustered{start: s, width: w, k: k, failed: failed, p: float64(m) / float64(len(checks))}
		}
		if best.start < 0 {
			continue
		}
		// One long outage is not a habit: the span's failures must fall
		// on minDays different dates.
		dates := map[string]bool{}
		for _, c := range checks {
			if !c.OK && best.covers(bin(c.At), n) {
				dates[c.At.In(loc).Format(time.DateOnly)] = true
			}
		}
		if len(dates) < minDays {
			return clustered{}, false
		}
		if tail(failed, best.k, best.p)*tries < ClusterSignificance {
			return best, true
		}
		return clustered{}, false
	}
	return clustered{}, false
}

// tail is P(X >= k) for X ~ Binomial(n, p).
func tail(n, k int, p float64) float64 {
	if p <= 0 {
		if k <= 0 {
			return 1
		}
		return 0
	}
	if p >= 1 {
		return 1
	}
	sum := 0.0
	for i := k; i <= n; i++ {
		lg := lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1) + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p)
		sum += math.Exp(lg)
	}
	return math.Min(sum, 1)
}

func lgamma(n int) float64 { v, _ := math.Lgamma(float64(n)); return v }

// night reports whether a span of half hours lies wholly outside 07:00–19:00.
func night(start, width int) bool {
	for i := 0; i < width; i++ {
		s := (start + i) % 48
		if s >= 14 && s < 38 {
			return false
		}
	}
	return true
}

// serverStarts are the distinct starts of the server known in (from, now].
func serverStarts(checks []Check, known []time.Time, from, now time.Time) []time.Time {
	seen := map[int64]bool{}
	var out []time.Time
	add := func(t time.Time) {
		if t.IsZero() || !t.After(from) || t.After(now) {
			return
		}
		k := t.Truncate(time.Minute).Unix()
		if seen[k] {
			return
		}
		seen[k] = true
		out = append(out, t)
	}
	for _, c := range checks {
		add(c.ServerStart)
	}
	for _, t := range known {
		add(t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// restart: failures that came with the server's restarts, that grow with
// its uptime, or that all came before its last restart.
func restart(checks []Check, starts []time.Time, loc *time.Location, span string) *Finding {
	if len(starts) == 0 {
		return nil
	}
	n := fmt.Sprintf("%d %s in %s", len(starts), plural(len(starts), "restart", "restarts"), span)
	var failures []Check
	for _, c := range checks {
		if !c.OK {
			failures = append(failures, c)
		}
	}
	if len(failures) < 2 {
		return nil
	}
	// started returns the last start at or before t.
	started := func(t time.Time, own time.Time) (time.Time, bool) {
		var last time.Time
		for _, s := range starts {
			if !s.After(t) {
				last = s
			}
		}
		if !own.IsZero() && !own.After(t) && own.After(last) {
			last = own
		}
		return last, !last.IsZero()
	}
	// Failures right after a start the checks saw happen (a start before
	// the first check says nothing: the checks may just have begun then).
	after := 0
	for _, c := range failures {
		if s, ok := started(c.At, c.ServerStart); ok && s.After(checks[0].At) && c.At.Sub(s) <= RestartGrace {
			after++
		}
	}
	if float64(after) >= ClusterShare*float64(len(failures)) {
		return &Finding{KindRestart, fmt.Sprintf("%d of %d failures came within %d minutes of the server starting (%s): the share is not ready while it starts",
			after, len(failures), int(RestartGrace/time.Minute), n)}
	}
	// Uptime: every failure at a longer uptime than every pass, in more
	// than one boot's life.
	minFail, maxOK := time.Duration(math.MaxInt64), time.Duration(-1)
	boots := map[int64]bool{}
	known := true
	for _, c := range checks {
		s, ok := started(c.At, c.ServerStart)
		if !ok {
			known = false
			break
		}
		up := c.At.Sub(s)
		if c.OK {
			maxOK = max(maxOK, up)
		} else {
			minFail = min(minFail, up)
			boots[s.Unix()] = true
		}
	}
	if known && len(failures) >= 3 && len(boots) >= 2 && maxOK >= 0 && minFail > maxOK {
		return &Finding{KindUptime, fmt.Sprintf("every failure (%d) came once the server had been up more than %s and each restart cleared it (%s): something on the server runs out while it is up — look for events 2017/2019/2020 (nonpaged or paged pool)",
			len(failures), roughly(maxOK), n)}
	}
	last := starts[len(starts)-1]
	before, since := 0, 0
	for _, c := range checks {
		if c.At.After(last) {
			since++
			if !c.OK {
				return nil
			}
		} else if !c.OK {
			before++
		}
	}
	if before == len(failures) && since >= 3 {
		return &Finding{KindRestart, fmt.Sprintf("every failure (%d) came before the server restarted at %s; none of the %d checks since failed",
			before, last.In(loc).Format("Mon 2 Jan 15:04"), since)}
	}
	return nil
}

// deviceOnly: the MFPs report failures at times when the checks on both
// sides of them passed.
func deviceOnly(checks []Check, reports []DeviceReport, loc *time.Location) *Finding {
	if len(checks) == 0 {
		return nil
	}
	var only []DeviceReport
	for _, r := range reports {
		i := sort.Search(len(checks), func(i int) bool { return checks[i].At.After(r.At) })
		if i == 0 || i == len(checks) {
			continue // not between two checks: nothing to compare with
		}
		if checks[i-1].OK && checks[i].OK {
			only = append(only, r)
		}
	}
	if len(only) < MinDeviceOnly && !(len(only) > 0 && len(only) == len(reports)) {
		return nil
	}
	devices := map[string]string{}
	var names []string
	for _, r := range only {
		if _, ok := devices[r.Device]; !ok {
			names = append(names, r.Device)
		}
		devices[r.Device] = r.Address
	}
	sort.Strings(names)
	var who []string
	for _, n := range names {
		if a := devices[n]; a != "" {
			who = append(who, n+" at "+a)
		} else {
			who = append(who, n)
		}
	}
	return &Finding{KindDeviceOnly, fmt.Sprintf("%d of %d scans the MFPs reported failed while the checks before and after passed (last %s): only the device sees it — what differs is its own SMB client (%s: its profile, its address), not the server",
		len(only), len(reports), only[len(only)-1].At.In(loc).Format("Mon 2 Jan 15:04"), strings.Join(who, ", "))}
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
