package pattern

import (
	"fmt"
	"math"
	"sort"
	"time"
)

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
	if f := withStart(checks, failures, starts, n); f != nil {
		return f
	}
	if f := uptime(checks, failures, starts, n); f != nil {
		return f
	}
	return beforeLastStart(checks, len(failures), starts[len(starts)-1], loc)
}

// started returns the last of starts at or before t, or own (the check's
// own ServerStart) when that is later.
func started(starts []time.Time, t, own time.Time) (time.Time, bool) {
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

// withStart: failures right after a start the checks saw happen (a start
// before the first check says nothing: the checks may just have begun
// then). n tells the restarts.
func withStart(checks, failures []Check, starts []time.Time, n string) *Finding {
	after := 0
	for _, c := range failures {
		if s, ok := started(starts, c.At, c.ServerStart); ok && s.After(checks[0].At) && c.At.Sub(s) <= RestartGrace {
			after++
		}
	}
	if float64(after) >= ClusterShare*float64(len(failures)) {
		return &Finding{KindRestart, fmt.Sprintf("%d of %d failures came within %d minutes of the server starting (%s): the share is not ready while it starts",
			after, len(failures), int(RestartGrace/time.Minute), n)}
	}
	return nil
}

// uptime: every failure at a longer uptime than every pass, in more than
// one boot's life.
func uptime(checks, failures []Check, starts []time.Time, n string) *Finding {
	minFail, maxOK := time.Duration(math.MaxInt64), time.Duration(-1)
	boots := map[int64]bool{}
	for _, c := range checks {
		s, ok := started(starts, c.At, c.ServerStart)
		if !ok {
			return nil
		}
		up := c.At.Sub(s)
		if c.OK {
			maxOK = max(maxOK, up)
		} else {
			minFail = min(minFail, up)
			boots[s.Unix()] = true
		}
	}
	if len(failures) >= 3 && len(boots) >= 2 && maxOK >= 0 && minFail > maxOK {
		return &Finding{KindUptime, fmt.Sprintf("every failure (%d) came once the server had been up more than %s and each restart cleared it (%s): something on the server runs out while it is up — look for events 2017/2019/2020 (nonpaged or paged pool)",
			len(failures), roughly(maxOK), n)}
	}
	return nil
}

// beforeLastStart: all the failures came before the server's last start
// and enough checks since passed.
func beforeLastStart(checks []Check, failures int, last time.Time, loc *time.Location) *Finding {
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
	if before == failures && since >= 3 {
		return &Finding{KindRestart, fmt.Sprintf("every failure (%d) came before the server restarted at %s; none of the %d checks since failed",
			before, last.In(loc).Format("Mon 2 Jan 15:04"), since)}
	}
	return nil
}
