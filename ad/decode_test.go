package ad

import (
	"math"
	"testing"
	"time"
)

func TestFileTime(t *testing.T) {
	tests := []struct {
		v    int64
		want time.Time
	}{
		{fileTimeEpochDelta, time.Unix(0, 0).UTC()},
		{134404930231278660, time.Date(2026, 11, 30, 6, 17, 3, 127866000, time.UTC)}, // alice's pwdLastSet in the lab
		{0, time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		if got := fileTime(tc.v); !got.Equal(tc.want) {
			t.Errorf("fileTime(%d) = %s, want %s", tc.v, got, tc.want)
		}
		if got := toFileTime(tc.want); got != tc.v {
			t.Errorf("toFileTime(%s) = %d, want %d", tc.want, got, tc.v)
		}
	}
}

func TestInterval(t *testing.T) {
	tests := []struct {
		v       int64
		want    time.Duration
		forever bool
	}{
		{-18000000000, 30 * time.Minute, false},   // lockoutDuration 30 min
		{-25920000000000, 720 * time.Hour, false}, // maxPwdAge 30 days
		{0, 0, false},
		{math.MinInt64, 0, true},
		{-math.MaxInt64, 0, true}, // too long for a Duration
		{18000000000, 30 * time.Minute, false},
	}
	for _, tc := range tests {
		d, f := interval(tc.v)
		if d != tc.want || f != tc.forever {
			t.Errorf("interval(%d) = %s, %v; want %s, %v", tc.v, d, f, tc.want, tc.forever)
		}
	}
}

func TestGeneralizedTime(t *testing.T) {
	want := time.Date(2026, 11, 30, 6, 15, 0, 0, time.UTC)
	for _, s := range []string{"20261130061500.0Z", "20261130061500Z", "20261130071500.0+0100"} {
		got, err := generalizedTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("generalizedTime(%q) = %s, %v", s, got, err)
		}
	}
	if _, err := generalizedTime("yesterday"); err == nil {
		t.Error("garbage accepted")
	}
}

// hoursFor builds a logonHours bitmap allowing from-to (UTC) on the weekdays.
func hoursFor(days []time.Weekday, from, to int) logonHours {
	h := make(logonHours, 21)
	for _, d := range days {
		for hr := from; hr < to; hr++ {
			i := int(d)*24 + hr
			h[i/8] |= 1 << (i % 8)
		}
	}
	return h
}

var weekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}

func TestLogonHours(t *testing.T) {
	office := hoursFor(weekdays, 7, 19)
	all := make(logonHours, 21)
	for i := range all {
		all[i] = 0xff
	}
	sunday0 := make(logonHours, 21)
	sunday0[0] = 1 // bit 0 = Sunday 00:00-01:00 UTC
	tests := []struct {
		name  string
		h     logonHours
		at    time.Time
		ok    bool
		next  string // RFC3339 or ""
		str   string
		count int
	}{
		{"office hours, Monday 08:30 UTC", office, time.Date(2026, 11, 30, 8, 30, 0, 0, time.UTC), true, "2026-11-30T09:00:00Z", "Mon 07-19, Tue 07-19, Wed 07-19, Thu 07-19, Fri 07-19 UTC", 60},
		{"office hours, Sunday", office, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), false, "2026-11-30T07:00:00Z", "", 60},
		{"office hours, Friday 19:00 is out", office, time.Date(2026, 12, 4, 19, 0, 0, 0, time.UTC), false, "2026-12-07T07:00:00Z", "", 60},
		{"office hours judged in UTC, not local time", office, time.Date(2026, 11, 30, 8, 30, 0, 0, time.FixedZone("UTC+9", 9*3600)), false, "", "", 60},
		{"none", make(logonHours, 21), time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), false, "", "none", 0},
		{"all", all, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), true, "", "all", 168},
		{"bit 0 is Sunday 00:00 UTC", sunday0, time.Date(2026, 11, 29, 0, 59, 0, 0, time.UTC), true, "2026-12-06T00:00:00Z", "Sun 00-01 UTC", 1},
		{"Saturday 23:00 is the last bit", sunday0, time.Date(2026, 12, 5, 23, 0, 0, 0, time.UTC), false, "2026-12-06T00:00:00Z", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.h.valid() {
				t.Fatal("invalid bitmap")
			}
			if got := tc.h.allowed(tc.at); got != tc.ok {
				t.Errorf("allowed(%s) = %v, want %v", tc.at, got, tc.ok)
			}
			if tc.next != "" {
				n, ok := tc.h.next(tc.at)
				if !ok || n.Format(time.RFC3339) != tc.next {
					t.Errorf("next(%s) = %s %v, want %s", tc.at, n, ok, tc.next)
				}
			}
			if tc.str != "" && tc.h.String() != tc.str {
				t.Errorf("String() = %q, want %q", tc.h.String(), tc.str)
			}
			if tc.h.count() != tc.count {
				t.Errorf("count() = %d, want %d", tc.h.count(), tc.count)
			}
		})
	}
	if _, ok := make(logonHours, 21).next(time.Now()); ok {
		t.Error("next hour found in an all-zero bitmap")
	}
}

func TestUACString(t *testing.T) {
	tests := map[uint32]string{
		0x200:        "0x00000200 NORMAL_ACCOUNT",
		0x202:        "0x00000202 ACCOUNTDISABLE|NORMAL_ACCOUNT",
		0x10200:      "0x00010200 NORMAL_ACCOUNT|DONT_EXPIRE_PASSWORD",
		0x0:          "0x00000000",
		0x80000000:   "0x80000000 0x80000000",
		uacLockout:   "0x00000010 LOCKOUT",
		0x00800010:   "0x00800010 LOCKOUT|PASSWORD_EXPIRED",
		0x1000 | 0x2: "0x00001002 ACCOUNTDISABLE|WORKSTATION_TRUST_ACCOUNT",
	}
	for v, want := range tests {
		if got := uacString(v); got != want {
			t.Errorf("uacString(%#x) = %q, want %q", v, got, want)
		}
	}
}

func TestDNSFromDN(t *testing.T) {
	if got := dnsFromDN("DC=kyolab,DC=test"); got != "kyolab.test" {
		t.Errorf("got %q", got)
	}
	if got := dnsFromDN("OU=x,DC=a,DC=b,DC=c"); got != "a.b.c" {
		t.Errorf("got %q", got)
	}
	if got := dnsFromDN("not a dn"); got != "" {
		t.Errorf("got %q", got)
	}
}

// toFileTime is fileTime's inverse, for tests.
func toFileTime(t time.Time) int64 {
	return t.Unix()*1e7 + int64(t.Nanosecond()/100) + fileTimeEpochDelta
}
