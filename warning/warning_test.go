package warning

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

var now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

func kinds(ws []Warning) string {
	var k []string
	for _, w := range ws {
		k = append(k, string(w.Kind))
	}
	return strings.Join(k, ",")
}

func TestAssess(t *testing.T) {
	th := DefaultThresholds()
	acct := func(f func(*Observation)) Observation {
		o := Observation{At: now, Passed: true, Account: `KYOLAB\scan`, Volume: `\\fs1\scans`}
		f(&o)
		return o
	}
	gib := uint64(1 << 30)
	samples := func(frees ...uint64) []Sample {
		var s []Sample
		for i, f := range frees {
			s = append(s, Sample{At: now.Add(time.Duration(i-len(frees)) * 24 * time.Hour), Free: f})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		th   Thresholds
		o    Observation
		h    History
		want string
		text string
	}{
		{"password in 6 days", th, acct(func(o *Observation) { o.PasswordExpires = now.Add(6*24*time.Hour + time.Hour) }), History{},
			"password-expires-soon", `KYOLAB\scan's password expires on 8 Dec (6 days)`},
		{"password in 20 days", th, acct(func(o *Observation) { o.PasswordExpires = now.Add(20 * 24 * time.Hour) }), History{}, "", ""},
		{"password already expired is not a warning", th, acct(func(o *Observation) { o.PasswordExpires = now.Add(-time.Hour) }), History{}, "", ""},
		{"password_days 0 is off", Thresholds{}, acct(func(o *Observation) { o.PasswordExpires = now.Add(24 * time.Hour) }), History{}, "", ""},
		{"account in 3 days", th, acct(func(o *Observation) { o.AccountExpires = now.Add(3*24*time.Hour + time.Minute) }), History{},
			"account-expires-soon", `the account KYOLAB\scan expires on 5 Dec (3 days)`},
		{"lockout rise by others", th, acct(func(o *Observation) {
			o.BadPwdCount, o.LastBadPassword, o.LockoutThreshold = 2, now.Add(-time.Minute), 3
		}),
			History{Account: &Seen{At: now.Add(-15 * time.Minute)}}, "lockout-pressure", "had 2 bad passwords since the last check (badPwdCount 0 → 2 of 3"},
		{"lockout rise that scanwarden sent", th, acct(func(o *Observation) { o.BadPwdCount, o.LastBadPassword = 1, now.Add(-time.Minute) }),
			History{Account: &Seen{At: now.Add(-15 * time.Minute)}, OwnFailures: []OwnFailure{{At: now.Add(-time.Minute - time.Second), Until: now.Add(-time.Minute)}}}, "", ""},
		{"bad password older than the last check", th, acct(func(o *Observation) { o.BadPwdCount, o.LastBadPassword = 2, now.Add(-time.Hour) }),
			History{Account: &Seen{At: now.Add(-15 * time.Minute), BadPwdCount: 2}}, "", ""},
		{"bad password in the same second as the last check, after it (the DC keeps whole seconds)", th, acct(func(o *Observation) {
			o.BadPwdCount, o.LastBadPassword, o.LockoutThreshold = 1, now.Add(-15*time.Minute).Truncate(time.Second), 3
		}),
			History{Account: &Seen{At: now.Add(-15 * time.Minute).Truncate(time.Second).Add(300 * time.Millisecond)}}, "lockout-pressure", "had 1 bad password since the last check (badPwdCount 0 → 1 of 3"},
		{"same second, no rise: the one already counted", th, acct(func(o *Observation) {
			o.BadPwdCount, o.LastBadPassword, o.LockoutThreshold = 1, now.Add(-15*time.Minute).Truncate(time.Second), 3
		}),
			History{Account: &Seen{At: now.Add(-15 * time.Minute).Truncate(time.Second).Add(300 * time.Millisecond), BadPwdCount: 1}}, "", ""},
		{"no previous check: nothing to compare", th, acct(func(o *Observation) { o.BadPwdCount, o.LastBadPassword = 2, now.Add(-time.Minute) }),
			History{}, "", ""},
		{"disk under the floor at once", th, acct(func(o *Observation) { o.HasFree, o.Free, o.Total = true, 100<<20, 100*gib }), History{},
			"disk-filling", `\\fs1\scans has only 100.0 MiB of 100.0 GiB (0.1 %) free (below 500.0 MiB)`},
		{"disk under 5 %", th, acct(func(o *Observation) { o.HasFree, o.Free, o.Total = true, 4*gib, 100*gib }), History{},
			"disk-filling", "(below 5 %)"},
		{"disk filling 1 GiB a day", th, acct(func(o *Observation) { o.HasFree, o.Free, o.Total = true, 10*gib, 100*gib }),
			History{Volume: samples(17*gib, 16*gib, 15*gib, 14*gib, 13*gib, 12*gib, 11*gib)}, "disk-filling",
			"filling by 1.0 GiB a day: full around 12 Dec (10 days; the median trend of 8 checks over 7 days)"},
		{"disk filling 1 GiB a day, 4 days of samples cannot say 10", th, acct(func(o *Observation) { o.HasFree, o.Free, o.Total = true, 10*gib, 100*gib }),
			History{Volume: samples(14*gib, 13*gib, 12*gib, 11*gib)}, "", ""},
		{"disk filling slowly", th, acct(func(o *Observation) { o.HasFree, o.Free, o.Total = true, 50*gib, 100*gib }),
			History{Volume: samples(57*gib, 56*gib, 55*gib, 54*gib, 53*gib, 52*gib, 51*gib)}, "", ""},
		{"a failing check keeps what it cannot clear", th, acct(func(o *Observation) { o.Passed = false }),
			History{Before: []Warning{{Kind: PasswordExpiresSoon, Subject: `KYOLAB\scan`}}}, "password-expires-soon", ""},
		{"a passing check clears", th, acct(func(o *Observation) {}),
			History{Before: []Warning{{Kind: PasswordExpiresSoon, Subject: `KYOLAB\scan`}}}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := Assess(tc.th, tc.o, tc.h, now, time.UTC)
			if got := kinds(ws); got != tc.want {
				t.Fatalf("kinds %q, want %q (%+v)", got, tc.want, ws)
			}
			if tc.text != "" && !strings.Contains(ws[0].Headline, tc.text) {
				t.Errorf("headline %q, want it to contain %q", ws[0].Headline, tc.text)
			}
		})
	}
}

func TestObserveReadsStoredReport(t *testing.T) {
	rep := smbcheck.Report{Started: now, Target: scanwarden.TargetInfo{Host: "DC1.kyolab.test", Share: "Small"},
		Verdict: smbcheck.Verdict{Cause: scanwarden.CauseOK},
		Steps: []smbcheck.Step{
			{ID: smbcheck.StepAD, Status: smbcheck.StatusOK, Evidence: smbcheck.Evidence{"account": `KYOLAB\pwsoon`,
				"password_expires": "2026-12-07T09:00:00Z", "bad_pwd_count": 1, "lockout_threshold": 3}},
			{ID: smbcheck.StepWrite, Status: smbcheck.StatusOK, Evidence: smbcheck.Evidence{"free_bytes": uint64(5 << 20), "total_bytes": uint64(8 << 20)}},
		}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back smbcheck.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]smbcheck.Report{"live": rep, "from JSON": back} {
		o := Observe(r)
		if o.Account != `KYOLAB\pwsoon` || o.AccountKey() != `kyolab\pwsoon` || !o.PasswordExpires.Equal(now.Add(5*24*time.Hour)) ||
			o.BadPwdCount != 1 || o.LockoutThreshold != 3 || !o.HasFree || o.Free != 5<<20 || o.Total != 8<<20 ||
			o.Volume != `\\dc1.kyolab.test\small` || !o.Passed {
			t.Errorf("%s: %+v", name, o)
		}
	}
}

func TestGroups(t *testing.T) {
	w := Warning{Kind: PasswordExpiresSoon, Subject: `KYOLAB\scan`, Headline: `KYOLAB\scan's password expires on 8 Dec (6 days)`,
		Fix: "set a password that does not expire", KyoceraCode: "1102", Due: now.Add(6 * 24 * time.Hour)}
	d := Warning{Kind: DiskFilling, Subject: `\\fs1\scans`, Headline: "full soon", KyoceraCode: "2231"}
	var rows []Row
	for i, dev := range []string{"mfp1", "mfp1", "mfp2", "mfp3", "mfp3"} {
		rows = append(rows, Row{Destination: "d" + string(rune('a'+i)), Device: dev, Since: now, Updated: now, Warning: w})
	}
	rows = append(rows, Row{Destination: "da", Device: "mfp1", Since: now, Updated: now, Warning: d})
	gs := Groups(rows)
	if len(gs) != 2 || gs[0].Kind != PasswordExpiresSoon || gs[1].Kind != DiskFilling {
		t.Fatalf("groups %+v", gs)
	}
	want := `KYOLAB\scan's password expires on 8 Dec (6 days): 5 destinations on 3 MFPs will fail with 1102; set a password that does not expire`
	if gs[0].Text != want {
		t.Errorf("text\n %s\nwant\n %s", gs[0].Text, want)
	}
	raised, cleared := Changes(gs[:1], gs[1:])
	if len(raised) != 1 || raised[0].Kind != DiskFilling || len(cleared) != 1 || cleared[0].Kind != PasswordExpiresSoon {
		t.Errorf("changes: raised %+v cleared %+v", raised, cleared)
	}
	if r, c := Changes(gs, gs); len(r)+len(c) != 0 {
		t.Errorf("no change: raised %+v cleared %+v", r, c)
	}
}
