package warning

import (
	"strings"
	"testing"
	"time"
)

// TestLockoutPressureOwnAndQuiet: scanwarden's own failed logons are
// matched by their time and never counted; a foreign bad password keeps
// the warning through later good checks until LockoutQuiet has passed
// without another; when the DC's last bad password was scanwarden's own
// the warning says it cannot tell when the others came.
func TestLockoutPressureOwnAndQuiet(t *testing.T) {
	th := DefaultThresholds()
	prevAt := now.Add(-15 * time.Minute)
	obs := func(n int, last time.Time) Observation {
		return Observation{At: now, Passed: true, Account: `KYOLAB\scan`, BadPwdCount: n, LastBadPassword: last, LockoutThreshold: 5}
	}
	own := func(at time.Time) OwnFailure { return OwnFailure{At: at, Until: at.Add(200 * time.Millisecond)} }
	raised := Assess(th, obs(1, now.Add(-5*time.Minute)), History{Account: &Seen{At: prevAt}}, now, time.UTC)
	if len(raised) != 1 || raised[0].Kind != LockoutPressure {
		t.Fatalf("foreign bad password: %+v", raised)
	}
	for _, tc := range []struct {
		name string
		o    Observation
		h    History
		at   time.Time
		want string // "" none; else a part of the headline
	}{
		{"own failure matched by its time (the ledger has let it go: only own_failures knows)", obs(1, now.Add(-5*time.Minute).Add(300*time.Millisecond)),
			History{Account: &Seen{At: prevAt}, OwnFailures: []OwnFailure{own(now.Add(-5 * time.Minute))}}, now, ""},
		{"own failure, DC clock a few seconds off", obs(1, now.Add(-5*time.Minute).Add(3*time.Second)),
			History{Account: &Seen{At: prevAt}, OwnFailures: []OwnFailure{own(now.Add(-5 * time.Minute))}}, now, ""},
		{"one own and one foreign, the last foreign", obs(2, now.Add(-2*time.Minute)),
			History{Account: &Seen{At: prevAt}, OwnFailures: []OwnFailure{own(now.Add(-5 * time.Minute))}}, now,
			"had 1 bad password since the last check (badPwdCount 0 → 2 of 5, locked at 5) that scanwarden did not send, the last at 2 Dec 08:58:00"},
		{"one own and one foreign, the last ours: when is not known", obs(2, now.Add(-5*time.Minute)),
			History{Account: &Seen{At: prevAt}, OwnFailures: []OwnFailure{own(now.Add(-5 * time.Minute))}}, now,
			"before 2 Dec 09:00:00 (the DC's last bad password was scanwarden's own: when the others came it does not tell)"},
		{"an own logon nobody saw the end of is said", obs(2, now.Add(-2*time.Minute)),
			History{Account: &Seen{At: prevAt}, OwnFailures: []OwnFailure{{At: now.Add(-5 * time.Minute), Unknown: true}}}, now,
			"1 of scanwarden's own logons in that span have no known outcome"},
		{"kept through a good check inside the quiet time", obs(0, now.Add(-5*time.Minute)),
			History{Account: &Seen{At: now.Add(-time.Minute), BadPwdCount: 1}, Before: raised}, now.Add(7 * time.Hour),
			"had 1 bad password that scanwarden did not send, the last at 2 Dec 08:55:00"},
		{"kept when the directory did not answer", Observation{Passed: true},
			History{Before: raised}, now.Add(time.Hour), "had 1 bad password since the last check"},
		{"cleared after the quiet time", obs(0, now.Add(-5*time.Minute)),
			History{Account: &Seen{At: now.Add(-time.Minute), BadPwdCount: 1}, Before: raised}, now.Add(8 * time.Hour), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.At = tc.at
			ws := Assess(th, o, tc.h, tc.at, time.UTC)
			if tc.want == "" {
				if len(ws) != 0 {
					t.Fatalf("warnings %+v", ws)
				}
				return
			}
			if len(ws) != 1 || ws[0].Kind != LockoutPressure || !strings.Contains(ws[0].Headline, tc.want) {
				t.Fatalf("warnings %+v\nwant %q", ws, tc.want)
			}
		})
	}
	// A second foreign bad password adds to the count and moves the quiet
	// time on.
	again := Assess(th, obs(1, now.Add(2*time.Hour)), History{Account: &Seen{At: now.Add(time.Hour)}, Before: raised}, now.Add(3*time.Hour), time.UTC)
	if len(again) != 1 || again[0].Evidence[evForeignCount] != 2 || !strings.Contains(again[0].Evidence["quiet_until"].(string), "T19:00:00Z") {
		t.Errorf("again: %+v", again)
	}
}

// TestForecast: a trend only from a span in proportion to what it
// announces, with a slope that swings do not move.
func TestForecast(t *testing.T) {
	gib := int64(1 << 30)
	series := func(step time.Duration, frees ...int64) []Sample {
		var s []Sample
		for i, f := range frees {
			s = append(s, Sample{At: now.Add(time.Duration(i-len(frees)+1) * step), Free: uint64(f)})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		s    []Sample
		ok   bool
		days float64 // time to full, when ok
	}{
		{"steady fill over a week", series(24*time.Hour, 17*gib, 16*gib, 15*gib, 14*gib, 13*gib, 12*gib, 11*gib, 10*gib), true, 10},
		{"the same fill with a swing of temporary files", series(24*time.Hour, 17*gib, 16*gib, 17*gib, 14*gib, 11*gib, 12*gib, 11*gib, 10*gib), true, 10},
		{"three samples in a minute (issue 30)", series(30*time.Second, 76*gib, 75*gib, 74*gib), false, 0},
		{"swings around a level over a day", series(3*time.Hour, 76*gib, 75*gib, 77*gib, 75*gib, 76*gib, 74*gib, 76*gib, 75*gib, 76*gib), false, 0},
		{"a steep fall over 6 hours cannot announce 3 days", series(time.Hour, 20*gib, 19*gib, 18*gib, 17*gib, 16*gib, 15*gib, 14*gib), false, 0},
		{"space freed: no fill", series(24*time.Hour, 10*gib, 11*gib, 30*gib, 30*gib, 31*gib), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := forecast(tc.s, now)
			if ok != tc.ok {
				t.Fatalf("forecast %+v ok %v, want %v", f, ok, tc.ok)
			}
			if ok {
				if d := f.Full.Sub(now).Hours() / 24; d < tc.days-0.5 || d > tc.days+0.5 {
					t.Errorf("full in %.1f days, want %.0f", d, tc.days)
				}
				if f.Span.Hours() < 0.5*f.Full.Sub(now).Hours() {
					t.Errorf("span %v for %v", f.Span, f.Full.Sub(now))
				}
			}
		})
	}
}

// TestDiskLowNowNeedsNoTrend: little free space is said from one sample,
// in bytes and in scans of the device's usual size.
func TestDiskLowNowNeedsNoTrend(t *testing.T) {
	o := Observation{At: now, Passed: true, Device: "KM-7F", Volume: `\\fs1\scans`, HasFree: true, Free: 300 << 20, Total: 100 << 30}
	ws := Assess(DefaultThresholds(), o, History{ScanBytes: 3 << 20}, now, time.UTC)
	want := `\\fs1\scans has only 300.0 MiB of 100.0 GiB (0.3 %) free (below 500.0 MiB): about 100 scans of KM-7F's usual 3.0 MiB`
	if len(ws) != 1 || ws[0].Headline != want || ws[0].Evidence["scans_left"] != uint64(100) {
		t.Errorf("warnings %+v\nwant %s", ws, want)
	}
}

// TestPreviousPassword: pwdLastSet newer than the last time the stored
// password was known current, inside the old password period, over NTLM.
func TestPreviousPassword(t *testing.T) {
	th := DefaultThresholds()
	set := now.Add(-10 * time.Minute)
	o := Observation{At: now, Passed: true, Device: "KM-7F", Account: `OFFICE\walt`, PasswordLastSet: set}
	known := &Proven{Current: now.Add(-15 * time.Minute)}
	for _, tc := range []struct {
		name string
		o    func(*Observation)
		p    *Proven
		want bool
	}{
		{"changed after the last known good", func(*Observation) {}, known, true},
		{"known current after the change", func(*Observation) {}, &Proven{Current: now.Add(-5 * time.Minute)}, false},
		{"never known current (a password new in scanwarden)", func(*Observation) {}, &Proven{}, false},
		{"no logon proved", func(*Observation) {}, nil, false},
		{"over Kerberos: the current one", func(o *Observation) { o.Kerberos = true }, known, false},
		{"after the old password period: the current one", func(o *Observation) { o.PasswordLastSet = now.Add(-61 * time.Minute) }, &Proven{Current: now.Add(-2 * time.Hour)}, false},
		{"failed check", func(o *Observation) { o.Passed = false }, known, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := o
			tc.o(&x)
			ws := Assess(th, x, History{Proven: tc.p}, now, time.UTC)
			got := len(ws) == 1 && ws[0].Kind == PreviousPassword
			if got != tc.want {
				t.Fatalf("warnings %+v", ws)
			}
			if got {
				want := "the password stored on KM-7F for walt is the account's previous password (changed at 08:50); the DC accepts it until about 09:50, then every scan fails with 1102"
				if ws[0].Headline != want || ws[0].Subject != `OFFICE\walt on KM-7F` || !strings.Contains(ws[0].Fix, "enter the account's new password on KM-7F and in scanwarden") {
					t.Errorf("warning %+v", ws[0])
				}
			}
		})
	}
}

// TestPreviousPasswordNotKeptPastItsHour: a failing check keeps the
// warnings it cannot confirm gone — but not previous-password once the DC
// stopped accepting the password: that is the failure now.
func TestPreviousPasswordNotKeptPastItsHour(t *testing.T) {
	w := Warning{Kind: PreviousPassword, Subject: `OFFICE\walt on KM-7F`, Due: now.Add(-time.Minute)}
	o := Observation{At: now, Passed: false, Account: `OFFICE\walt`}
	if ws := Assess(DefaultThresholds(), o, History{Before: []Warning{w}}, now, time.UTC); len(ws) != 0 {
		t.Errorf("past its hour: %+v", ws)
	}
	w.Due = now.Add(time.Minute)
	if ws := Assess(DefaultThresholds(), o, History{Before: []Warning{w}}, now, time.UTC); len(ws) != 1 {
		t.Errorf("inside its hour: %+v", ws)
	}
}
