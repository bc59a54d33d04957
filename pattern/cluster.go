package pattern

import (
	"fmt"
	"math"
	"time"
)

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
