package pattern

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

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
