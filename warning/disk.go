package warning

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// A forecast speaks only from evidence in proportion to its claim.
const (
	// forecastMinSamples: at least this many samples in the span.
	forecastMinSamples = 5
	// forecastMinShare: the span of samples is at least this share of the
	// time to full that the forecast announces ("full in 10 days" needs
	// 5 days of samples).
	forecastMinShare = 0.5
	// forecastMinSpan: never a forecast from less than this.
	forecastMinSpan = 6 * time.Hour
)

// diskFilling: little free space now (said at once, in bytes and in scans
// of the device's usual size, no trend needed), or a robust trend over a
// span of samples long enough for the day it announces.
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
	w := &Warning{Kind: DiskFilling, Subject: o.Volume, KyoceraCode: code(scanwarden.CauseDiskFull), Evidence: ev,
		Fix: "free space on the volume (move or delete old scans), grow it, or raise the account's quota"}
	floor := th.DiskFloorBytes > 0 && o.Free < uint64(th.DiskFloorBytes)
	pct := th.DiskPercent > 0 && o.Total > 0 && float64(o.Free)*100 < float64(o.Total)*float64(th.DiskPercent)
	if floor || pct {
		what := fmt.Sprintf("below %d %%", th.DiskPercent)
		if floor {
			what = "below " + fmtBytes(uint64(th.DiskFloorBytes))
		}
		w.Headline = fmt.Sprintf("%s has only %s free (%s)", o.Volume, free, what)
		if h.ScanBytes > 0 {
			n := o.Free / uint64(h.ScanBytes)
			ev["usual_scan_bytes"] = h.ScanBytes
			ev["scans_left"] = n
			w.Headline += fmt.Sprintf(": about %d scan%s of %s's usual %s", n, plural(int(min(n, 2))), o.Device, fmtBytes(uint64(h.ScanBytes)))
		} else {
			w.Headline += ": the next large scans will not fit"
		}
		return w
	}
	if th.DiskDays <= 0 {
		return nil
	}
	f, ok := forecast(append(slices.Clone(h.Volume), Sample{At: o.At, Free: o.Free}), now)
	if !ok || f.Full.Sub(now) > days(th.DiskDays) {
		return nil
	}
	w.Due = f.Full
	ev["projected_full"] = f.Full.UTC().Format(time.RFC3339)
	ev["bytes_per_day"] = int64(f.Rate * 86400)
	ev["samples"] = f.N
	ev["span_seconds"] = int64(f.Span.Seconds())
	w.Headline = fmt.Sprintf("%s has %s free and is filling by %s a day: full around %s (%s; the median trend of %d checks over %s)",
		o.Volume, free, fmtBytes(uint64(f.Rate*86400)), fmtWhen(f.Full, now, loc), left(f.Full.Sub(now)), f.N, spanWords(f.Span))
	return w
}

// Forecast is when a volume's trend reaches zero free bytes, the rate it
// fills at (bytes per second), and the samples and span it came from.
type Forecast struct {
	Full time.Time
	Rate float64
	N    int
	Span time.Duration
}

// forecast fits a Theil–Sen line (the median of the slopes between every
// pair of samples: a swing of temporary files moves a few pairs, not the
// median) and projects it from its median level now. It says nothing
// unless the volume fills and the span of samples is at least
// forecastMinShare of the time to full it would announce.
func forecast(s []Sample, now time.Time) (Forecast, bool) {
	if len(s) < forecastMinSamples {
		return Forecast{}, false
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].At.Before(s[j].At) })
	span := s[len(s)-1].At.Sub(s[0].At)
	if span < forecastMinSpan {
		return Forecast{}, false
	}
	slopes := make([]float64, 0, len(s)*(len(s)-1)/2)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			dt := s[j].At.Sub(s[i].At).Seconds()
			if dt <= 0 {
				continue
			}
			slopes = append(slopes, (float64(s[j].Free)-float64(s[i].Free))/dt)
		}
	}
	slope := median(slopes) // bytes per second, negative while filling
	if slope >= 0 {
		return Forecast{}, false
	}
	levels := make([]float64, len(s))
	for i, p := range s {
		levels[i] = float64(p.Free) - slope*p.At.Sub(now).Seconds()
	}
	level := median(levels) // the line's free bytes now
	if level <= 0 {
		level = 0
	}
	secs := level / -slope
	if secs > 100*365*86400 || span.Seconds() < forecastMinShare*secs {
		return Forecast{}, false
	}
	return Forecast{Full: now.Add(time.Duration(secs * float64(time.Second))), Rate: -slope, N: len(s), Span: span}, true
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// spanWords: "9 days", "14 hours".
func spanWords(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d.Hours()/24))
	}
	return fmt.Sprintf("%d hours", int(d.Hours()))
}
