package pattern

import "fmt"

// sessionLimit: the failures coincide with the session count at its
// maximum (the limit when known, else the highest count seen): most checks
// at the maximum failed, most below it passed, and most failures with a
// count were at it (a count read a moment after the check may have moved:
// a few checks on the wrong side do not hide the rule). Without counts:
// the server refused another connection again and again.
func sessionLimit(checks []Check) *Finding {
	var failures, limitRefusals int
	most, limit := -1, 0
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
		most = max(most, c.Sessions)
		if c.Limit > 0 {
			limit, name = c.Limit, c.LimitName
		}
	}
	top := most
	if limit > 0 {
		top = limit
	}
	if f := atTop(checks, top, limit, name); f != nil {
		return f
	}
	if limitRefusals >= MinLimitFailures {
		return &Finding{KindSessionLimit, fmt.Sprintf("%d of %d failures were the server refusing another connection: its session or connection limit is reached at times (other PCs, backup software)",
			limitRefusals, failures)}
	}
	return nil
}

// atTop is sessionLimit's rule with counts: top is the limit (when known,
// then named name) or the highest count seen.
func atTop(checks []Check, top, limit int, name string) *Finding {
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
			okMax = max(okMax, c.Sessions)
		}
	}
	failed := failedAt + failedBelow
	atRate := rate(failedAt, failedAt+okAt)
	belowRate := rate(failedBelow, failedBelow+okBelow)
	if !(top > 0 && failedAt >= MinLimitFailures && float64(failedAt) >= ClusterShare*float64(failed) &&
		atRate >= ClusterShare && belowRate <= 1-ClusterShare) {
		return nil
	}
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

func rate(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}
