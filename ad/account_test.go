package ad

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

var (
	tNow = time.Date(2026, 11, 17, 9, 30, 0, 0, time.UTC) // a Tuesday
	tDom = &domainInfo{BaseDN: "DC=kyolab,DC=test", DNS: "kyolab.test", NetBIOS: "KYOLAB"}
	tPol = policy{Threshold: 3, Duration: 30 * time.Minute, Window: 30 * time.Minute, MaxPwdAge: 30 * 24 * time.Hour, Source: "domain"}
)

func ft(t time.Time) int64 { return toFileTime(t) }

// goodRecord is an account that can log on at tNow.
func goodRecord() *record {
	return &record{
		DN: "CN=scan,CN=Users,DC=kyolab,DC=test", SAM: "scan", UPN: "scan@kyolab.test", UAC: 0x200,
		HasUACComputed: true, PwdLastSet: ft(tNow.Add(-10 * 24 * time.Hour)),
		HasPwdExpiry: true, PwdExpiry: ft(tNow.Add(20 * 24 * time.Hour)), AccountExpires: fileTimeNever,
		SID: "S-1-5-21-1-2-3-1105", TokenGroups: []string{"S-1-5-21-1-2-3-513", "S-1-5-32-545"},
		MemberOf: []string{"CN=scanners,CN=Users,DC=kyolab,DC=test", "CN=Print Operators,CN=Builtin,DC=kyolab,DC=test"},
		Raw:      smbcheck.Evidence{},
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name     string
		mod      func(r *record, p *policy)
		ws       string
		how      string
		typed    string
		cause    scanwarden.Cause
		causes   []scanwarden.Cause
		certain  bool
		budget   int
		summary  []string // substrings
		fix      []string
		check    func(t *testing.T, u *User)
		margin   int
		location *time.Location
	}{
		{name: "good", cause: scanwarden.CauseOK, budget: 2,
			summary: []string{"KYOLAB\\scan can log on now: 0 of 3 bad attempts, password expires 7 Dec"}, fix: []string{"Nothing to fix"},
			check: func(t *testing.T, u *User) {
				if !slices.Equal(u.SIDs, []string{"S-1-5-21-1-2-3-1105", "S-1-5-21-1-2-3-513", "S-1-5-32-545"}) {
					t.Errorf("SIDs %v", u.SIDs)
				}
				if !slices.Equal(u.Groups, []string{"Print Operators", "scanners"}) {
					t.Errorf("groups %v", u.Groups)
				}
				if u.PasswordExpires == nil || !u.PasswordExpires.Equal(tNow.Add(20*24*time.Hour)) {
					t.Errorf("password expires %v", u.PasswordExpires)
				}
			}},
		{name: "disabled", mod: func(r *record, _ *policy) { r.UAC |= uacAccountDisable },
			cause: scanwarden.CauseAccountDisabled, certain: true, budget: 2,
			summary: []string{"KYOLAB\\scan is disabled", "ACCOUNTDISABLE"}, fix: []string{"Enable-ADAccount scan"}},
		{name: "locked, unlocks after the duration",
			mod: func(r *record, _ *policy) {
				r.LockoutTime = ft(time.Date(2026, 11, 17, 9, 12, 0, 0, time.UTC))
				r.BadPasswordTime = r.LockoutTime
				r.BadPwdCount = 3
				r.UACComputed = uacLockout
			},
			cause: scanwarden.CauseAccountLocked, certain: true, budget: 0,
			summary: []string{"locked out since 09:12 after 3 bad attempts (threshold 3), unlocks 09:42"},
			fix:     []string{"Unlock scan", "wait until 09:42", "if the Login Password stored on the MFP is wrong"},
			check: func(t *testing.T, u *User) {
				if u.LockedUntil == nil || u.LockedUntil.Format("15:04") != "09:42" || !u.Locked || u.BadPwdCount != 3 {
					t.Errorf("locked %v until %v count %d", u.Locked, u.LockedUntil, u.BadPwdCount)
				}
			}},
		{name: "locked in another time zone shows local times",
			mod: func(r *record, _ *policy) {
				r.LockoutTime = ft(time.Date(2026, 11, 17, 9, 12, 0, 0, time.UTC))
				r.BadPwdCount = 3
				r.UACComputed = uacLockout
			},
			location: time.FixedZone("CET", 3600),
			cause:    scanwarden.CauseAccountLocked, certain: true, budget: 0,
			summary: []string{"since 10:12", "unlocks 10:42"}},
		{name: "locked until an administrator unlocks",
			mod: func(r *record, p *policy) {
				r.LockoutTime = ft(tNow.Add(-48 * time.Hour))
				r.BadPwdCount = 3
				r.UACComputed = uacLockout
				p.UntilUnlocked = true
			},
			cause: scanwarden.CauseAccountLocked, certain: true, budget: 0,
			summary: []string{"since 15 Nov 09:30", "until an administrator unlocks it"}, fix: []string{"an administrator must unlock it"},
			check: func(t *testing.T, u *User) {
				if u.LockedUntil != nil {
					t.Errorf("locked until %v", u.LockedUntil)
				}
			}},
		{name: "lockout expired (no computed flags): not locked, count restarted",
			mod: func(r *record, _ *policy) {
				r.HasUACComputed = false
				r.LockoutTime = ft(tNow.Add(-2 * time.Hour))
				r.BadPasswordTime = r.LockoutTime
				r.BadPwdCount = 3
			},
			cause: scanwarden.CauseOK, budget: 2, summary: []string{"0 of 3 bad attempts"}},
		{name: "lockout still running (no computed flags)",
			mod: func(r *record, _ *policy) {
				r.HasUACComputed = false
				r.LockoutTime = ft(tNow.Add(-10 * time.Minute))
				r.BadPasswordTime = r.LockoutTime
				r.BadPwdCount = 3
			},
			cause: scanwarden.CauseAccountLocked, certain: true, budget: 0, summary: []string{"unlocks 09:50"}},
		{name: "the DC's computed flag wins over lockoutTime",
			mod:   func(r *record, _ *policy) { r.LockoutTime = ft(tNow.Add(-time.Minute)) },
			cause: scanwarden.CauseOK, budget: 2},
		{name: "must change password",
			mod: func(r *record, _ *policy) {
				r.PwdLastSet, r.PwdExpiry = 0, 0
				r.UACComputed = uacPasswordExpired
			},
			cause: scanwarden.CausePasswordMustChange, certain: true, budget: 2,
			summary: []string{"must change its password at next logon (pwdLastSet=0)"}, fix: []string{"User must change password at next logon"},
			check: func(t *testing.T, u *User) {
				if !u.MustChangePassword || u.PasswordExpires != nil {
					t.Errorf("must change %v, expires %v", u.MustChangePassword, u.PasswordExpires)
				}
			}},
		{name: "pwdLastSet 0 with a password that never expires",
			mod: func(r *record, _ *policy) {
				r.PwdLastSet, r.PwdExpiry = 0, fileTimeNever
				r.UAC |= uacDontExpirePassword
			},
			cause: scanwarden.CauseOK, budget: 2, summary: []string{"password does not expire"}},
		{name: "password expired",
			mod: func(r *record, _ *policy) {
				r.PwdLastSet = ft(time.Date(2026, 10, 13, 8, 0, 0, 0, time.UTC))
				r.PwdExpiry = ft(time.Date(2026, 11, 12, 8, 0, 0, 0, time.UTC))
				r.UACComputed = uacPasswordExpired
			},
			cause: scanwarden.CausePasswordExpired, certain: true, budget: 2,
			summary: []string{"the password of KYOLAB\\scan expired on 12 Nov (set 13 Oct, maximum age 30 days)"},
			fix:     []string{"Set a new password for scan"}},
		{name: "password expired, from pwdLastSet and maxPwdAge alone",
			mod: func(r *record, _ *policy) {
				r.HasUACComputed, r.HasPwdExpiry = false, false
				r.PwdLastSet = ft(time.Date(2026, 10, 13, 8, 0, 0, 0, time.UTC))
			},
			cause: scanwarden.CausePasswordExpired, certain: true, budget: 2, summary: []string{"expired on 12 Nov"}},
		{name: "password expiring soon",
			mod:   func(r *record, _ *policy) { r.PwdExpiry = ft(tNow.Add(3*24*time.Hour + time.Hour)) },
			cause: scanwarden.CauseOK, budget: 2,
			summary: []string{"password expires 20 Nov (in 3 days"}, fix: []string{"before 20 Nov"}},
		{name: "account expired",
			mod:   func(r *record, _ *policy) { r.AccountExpires = ft(time.Date(2026, 11, 16, 23, 0, 0, 0, time.UTC)) },
			cause: scanwarden.CauseAccountExpired, certain: true, budget: 2,
			summary: []string{"KYOLAB\\scan expired on 16 Nov"}, fix: []string{"Set-ADAccountExpiration scan"}},
		{name: "account expires later",
			mod:   func(r *record, _ *policy) { r.AccountExpires = ft(tNow.Add(time.Hour)) },
			cause: scanwarden.CauseOK, budget: 2,
			check: func(t *testing.T, u *User) {
				if u.AccountExpires == nil {
					t.Error("account_expires missing")
				}
			}},
		{name: "workstation restricted",
			mod:   func(r *record, _ *policy) { r.Workstations = []string{"MFP01", "PC7"} },
			ws:    "SCANWARDEN",
			cause: scanwarden.CauseWorkstationRestricted, certain: true, budget: 2,
			summary: []string{"may log on only to MFP01, PC7 — the MFP sends SCANWARDEN"}, fix: []string{"Add SCANWARDEN to the \"Log On To\" list of scan"}},
		{name: "workstation allowed, case-insensitively",
			mod:   func(r *record, _ *policy) { r.Workstations = []string{"mfp01", "PC7"} },
			ws:    "MFP01",
			cause: scanwarden.CauseOK, budget: 2, summary: []string{"may log on only to mfp01, PC7 (the MFP sends MFP01)"}},
		{name: "outside logon hours",
			mod: func(r *record, _ *policy) {
				r.LogonHours, r.HasLogonHours = hoursFor([]time.Weekday{time.Wednesday}, 7, 19), true
			},
			cause: scanwarden.CauseLogonHours, certain: true, budget: 2,
			summary: []string{"may not log on at this hour (Tue 09:30)", "allow Wed 07-19 UTC; next allowed Wed 18 Nov 07:00"},
			check: func(t *testing.T, u *User) {
				if u.LogonHours != "Wed 07-19 UTC" {
					t.Errorf("logon hours %q", u.LogonHours)
				}
			}},
		{name: "logon hours never",
			mod: func(r *record, _ *policy) {
				r.LogonHours, r.HasLogonHours = make(logonHours, 21), true
			},
			cause: scanwarden.CauseLogonHours, certain: true, budget: 2, summary: []string{"allow no hour at all"}},
		{name: "inside logon hours",
			mod: func(r *record, _ *policy) {
				r.LogonHours, r.HasLogonHours = hoursFor(weekdays, 7, 19), true
			},
			cause: scanwarden.CauseOK, budget: 2, summary: []string{"logon hours Mon 07-19"}},
		{name: "malformed logon hours are not judged",
			mod: func(r *record, _ *policy) {
				r.LogonHours, r.HasLogonHours = make(logonHours, 3), true
			},
			cause: scanwarden.CauseOK, budget: 2,
			check: func(t *testing.T, u *User) {
				if u.Evidence["logonHours_note"] == nil {
					t.Error("no note on malformed logon hours")
				}
			}},
		{name: "several states: first as cause, the rest in the summary",
			mod: func(r *record, _ *policy) {
				r.UAC |= uacAccountDisable
				r.Workstations = []string{"MFP01"}
			},
			cause: scanwarden.CauseAccountDisabled, certain: true, budget: 2,
			causes:  []scanwarden.Cause{scanwarden.CauseAccountDisabled, scanwarden.CauseWorkstationRestricted},
			summary: []string{"is disabled", "; also KYOLAB\\scan may log on only to MFP01"}},
		{name: "bad passwords within the window count",
			mod: func(r *record, _ *policy) {
				r.BadPwdCount, r.BadPasswordTime = 1, ft(tNow.Add(-5*time.Minute))
			},
			cause: scanwarden.CauseOK, budget: 1, summary: []string{"1 of 3 bad attempts"}},
		{name: "bad passwords older than the window do not",
			mod: func(r *record, _ *policy) {
				r.BadPwdCount, r.BadPasswordTime = 2, ft(tNow.Add(-31*time.Minute))
			},
			cause: scanwarden.CauseOK, budget: 2, summary: []string{"0 of 3 bad attempts"}},
		{name: "a wider margin", margin: 2, cause: scanwarden.CauseOK, budget: 1},
		{name: "no lockout policy",
			mod:   func(_ *record, p *policy) { p.Threshold = 0 },
			cause: scanwarden.CauseOK, budget: -1, summary: []string{"no lockout policy"}},
		{name: "bare name matched as UPN prefix", how: "upn-prefix", typed: "john.doe",
			mod:   func(r *record, _ *policy) { r.SAM, r.UPN = "jdoe", "john.doe@kyolab.test" },
			cause: scanwarden.CauseOK, budget: 2,
			summary: []string{`the user name john.doe is not a sAMAccountName: it matched the UPN prefix of KYOLAB\jdoe (john.doe@kyolab.test), so the MFP must send john.doe@kyolab.test or KYOLAB\jdoe. KYOLAB\jdoe can log on now`}},
		{name: "other domain prefix noted", typed: `PC7\scan`, cause: scanwarden.CauseOK, budget: 2,
			check: func(t *testing.T, u *User) {
				if !strings.Contains(u.Evidence["typed_domain_note"].(string), `prefix PC7 is not the domain KYOLAB`) {
					t.Errorf("note: %v", u.Evidence["typed_domain_note"])
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, p := goodRecord(), tPol
			if tc.mod != nil {
				tc.mod(r, &p)
			}
			ws, how, typed, margin, loc := "SCANWARDEN", "sAMAccountName", "scan", 1, time.UTC
			if tc.ws != "" {
				ws = tc.ws
			}
			if tc.how != "" {
				how = tc.how
			}
			if tc.typed != "" {
				typed = tc.typed
			}
			if tc.margin != 0 {
				margin = tc.margin
			}
			if tc.location != nil {
				loc = tc.location
			}
			u := judge(r, parseTyped(typed), how, ws, tDom, p, tNow, margin, loc)
			if u.Cause != tc.cause || u.Certain != tc.certain || u.Budget != tc.budget {
				t.Errorf("cause %s certain %v budget %d; want %s %v %d\nsummary: %s", u.Cause, u.Certain, u.Budget, tc.cause, tc.certain, tc.budget, u.Summary)
			}
			if tc.causes != nil && !slices.Equal(u.Causes, tc.causes) {
				t.Errorf("causes %v, want %v", u.Causes, tc.causes)
			}
			for _, s := range tc.summary {
				if !strings.Contains(u.Summary, s) {
					t.Errorf("summary %q lacks %q", u.Summary, s)
				}
			}
			for _, s := range tc.fix {
				if !strings.Contains(u.Fix, s) {
					t.Errorf("fix %q lacks %q", u.Fix, s)
				}
			}
			if !u.Found || u.SAM != r.SAM || u.NetBIOSDomain != "KYOLAB" || u.DNSDomain != "kyolab.test" {
				t.Errorf("identity %+v", u)
			}
			a := u.Account()
			if a.Cause != u.Cause || a.Budget != u.Budget || a.Certain != u.Certain || !slices.Equal(a.SIDs, u.SIDs) || a.UPN != r.UPN {
				t.Errorf("Account() %+v does not match the user", a)
			}
			if tc.check != nil {
				tc.check(t, u)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	tests := []struct {
		threshold, bad, margin int
		locked                 bool
		want                   int
	}{
		{3, 0, 1, false, 2},
		{3, 1, 1, false, 1},
		{3, 2, 1, false, 0},
		{3, 3, 1, false, 0},
		{3, 7, 1, false, 0},
		{3, 0, 2, false, 1},
		{3, 0, 0, false, 2}, // the margin is at least 1
		{3, 0, -4, false, 2},
		{10, 2, 3, false, 5},
		{1, 0, 1, false, 0},
		{3, 0, 1, true, 0},
		{0, 0, 1, false, -1},
		{0, 5, 1, true, -1},
	}
	for _, tc := range tests {
		if got := budget(tc.threshold, tc.bad, tc.margin, tc.locked); got != tc.want {
			t.Errorf("budget(threshold %d, bad %d, margin %d, locked %v) = %d, want %d", tc.threshold, tc.bad, tc.margin, tc.locked, got, tc.want)
		}
	}
}

func TestParseTyped(t *testing.T) {
	tests := []struct {
		in                         string
		form, prefix, user, suffix string
	}{
		{"alice", "bare", "", "alice", ""},
		{" alice ", "bare", "", "alice", ""},
		{`KYOLAB\alice`, "domain", "KYOLAB", "alice", ""},
		{`.\alice`, "local", ".", "alice", ""},
		{`PC7\alice`, "domain", "PC7", "alice", ""},
		{"alice@kyolab.test", "upn", "", "alice", "kyolab.test"},
		{"a@b@kyolab.test", "upn", "", "a@b", "kyolab.test"},
		{`KYOLAB\`, "invalid", "KYOLAB", "", ""},
		{`\alice`, "invalid", "", "alice", ""},
		{"@kyolab.test", "invalid", "", "", "kyolab.test"},
		{"alice@", "invalid", "", "alice", ""},
		{`A\B\c`, "invalid", "A", `B\c`, ""},
		{"", "invalid", "", "", ""},
	}
	for _, tc := range tests {
		got := parseTyped(tc.in)
		if got.Kind != tc.form || got.Prefix != tc.prefix || got.User != tc.user || got.Suffix != tc.suffix {
			t.Errorf("parseTyped(%q) = %+v", tc.in, got)
		}
	}
}

func TestLookupPlan(t *testing.T) {
	tests := []struct {
		typed string
		want  []string // filters' last clause and how
	}{
		{"alice", []string{"(sAMAccountName=alice) sAMAccountName", "(userPrincipalName=alice@*) upn-prefix"}},
		{`KYOLAB\alice`, []string{"(sAMAccountName=alice) sAMAccountName"}},
		{`.\alice`, []string{"(sAMAccountName=alice) sAMAccountName"}},
		{"john.doe@kyolab.test", []string{"(userPrincipalName=john.doe@kyolab.test) userPrincipalName", "(sAMAccountName=john.doe) implicit-upn"}},
		{"alice@KYOLAB", []string{"(userPrincipalName=alice@KYOLAB) userPrincipalName", "(sAMAccountName=alice) implicit-upn"}},
		{"alice@other.example", []string{"(userPrincipalName=alice@other.example) userPrincipalName"}},
		{"*)(cn=*", []string{`(sAMAccountName=\2a\29\28cn=\2a) sAMAccountName`, `(userPrincipalName=\2a\29\28cn=\2a@*) upn-prefix`}},
		{"*", []string{`(sAMAccountName=\2a) sAMAccountName`, `(userPrincipalName=\2a@*) upn-prefix`}},
		{`KYOLAB\a)(|(x=*`, []string{`(sAMAccountName=a\29\28|\28x=\2a) sAMAccountName`}},
		{"é\x00", []string{`(sAMAccountName=\c3\a9\00) sAMAccountName`, `(userPrincipalName=\c3\a9\00@*) upn-prefix`}},
		{`KYOLAB\`, nil},
	}
	for _, tc := range tests {
		var got []string
		for _, a := range lookupPlan(parseTyped(tc.typed), tDom) {
			const head = "(&(objectClass=user)(!(objectClass=computer))"
			if !strings.HasPrefix(a.filter, head) || !strings.HasSuffix(a.filter, ")") {
				t.Errorf("%q: filter %s", tc.typed, a.filter)
				continue
			}
			got = append(got, strings.TrimSuffix(strings.TrimPrefix(a.filter, head), ")")+" "+a.how)
			if _, err := ldap.CompileFilter(a.filter); err != nil {
				t.Errorf("%q: filter %s does not compile: %v", tc.typed, a.filter, err)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("lookupPlan(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}

func TestNotFound(t *testing.T) {
	tests := []struct {
		typed   string
		n       int
		certain bool
		summary string
	}{
		{"nosuch", 0, false, "may still be a local account"},
		{`KYOLAB\nosuch`, 0, true, `no account of KYOLAB (kyolab.test) has the name KYOLAB\nosuch (`},
		{"nosuch@kyolab.test", 0, true, "searched"},
		{`PC7\nosuch`, 0, false, "local account"},
		{"j", 2, false, "matches more than one account"},
		{`\x`, 0, true, "not a user name"},
	}
	for _, tc := range tests {
		var entries []*ldap.Entry
		for i := 0; i < tc.n; i++ {
			entries = append(entries, ldap.NewEntry("CN=x", map[string][]string{"sAMAccountName": {"x"}, "userPrincipalName": {"j@x"}}))
		}
		u := notFound(parseTyped(tc.typed), "MFP01", tDom, entries, []string{"sAMAccountName=" + tc.typed})
		if u.Found || u.Cause != scanwarden.CauseUnknownUser || u.Certain != tc.certain || !strings.Contains(u.Summary, tc.summary) {
			t.Errorf("%q: %+v", tc.typed, u)
		}
		if a := u.Account(); a.Found || a.Cause != scanwarden.CauseUnknownUser {
			t.Errorf("%q: Account() %+v", tc.typed, a)
		}
	}
}

func TestParseUser(t *testing.T) {
	sid := []byte{1, 5, 0, 0, 0, 0, 0, 5, 21, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0x51, 4, 0, 0}
	grp := []byte{1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x21, 2, 0, 0}
	e := ldap.NewEntry("CN=ivan,CN=Users,DC=kyolab,DC=test", map[string][]string{
		"sAMAccountName":                      {"ivan"},
		"userPrincipalName":                   {"ivan@kyolab.test"},
		"userAccountControl":                  {"512"},
		"msDS-User-Account-Control-Computed":  {"16"},
		"lockoutTime":                         {"134404930246021400"},
		"badPwdCount":                         {"3"},
		"pwdLastSet":                          {"134404930232707750"},
		"msDS-UserPasswordExpiryTimeComputed": {"9223372036854775807"},
		"accountExpires":                      {"0"},
		"userWorkstations":                    {"MFP01, PC7,"},
		"logonHours":                          {string(make([]byte, 21))},
		"objectSid":                           {string(sid)},
		"tokenGroups":                         {string(grp)},
		"memberOf":                            {"CN=scanners,CN=Users,DC=kyolab,DC=test"},
	})
	r, err := parseUser(e)
	if err != nil {
		t.Fatal(err)
	}
	if r.SAM != "ivan" || r.UAC != 512 || !r.HasUACComputed || r.UACComputed != 16 || r.BadPwdCount != 3 ||
		r.PwdExpiry != math.MaxInt64 || !r.HasPwdExpiry || r.AccountExpires != 0 ||
		!slices.Equal(r.Workstations, []string{"MFP01", "PC7"}) || !r.HasLogonHours || !r.LogonHours.valid() ||
		r.SID != "S-1-5-21-1-2-3-1105" || !slices.Equal(r.TokenGroups, []string{"S-1-5-32-545"}) {
		t.Errorf("parsed %+v", r)
	}
	if r.Raw["userAccountControl"] != "0x00000200 NORMAL_ACCOUNT" || r.Raw["logonHours"] != strings.Repeat("00", 21) {
		t.Errorf("raw evidence %v", r.Raw)
	}
	bad := ldap.NewEntry("CN=x", map[string][]string{"badPwdCount": {"many"}})
	if _, err := parseUser(bad); err == nil || !strings.Contains(err.Error(), "badPwdCount") {
		t.Errorf("bad integer: %v", err)
	}
	short := ldap.NewEntry("CN=x", map[string][]string{"objectSid": {string(sid[:10])}})
	if _, err := parseUser(short); err == nil || !strings.Contains(err.Error(), "objectSid") {
		t.Errorf("short SID: %v", err)
	}
}

func TestParsePolicy(t *testing.T) {
	e := ldap.NewEntry("DC=kyolab,DC=test", map[string][]string{
		"lockoutThreshold": {"3"}, "lockoutDuration": {"-18000000000"},
		"lockOutObservationWindow": {"-18000000000"}, "maxPwdAge": {"-9223372036854775808"},
	})
	p, err := parsePolicy(e, domainPolicyAttrs, "domain")
	if err != nil || p.Threshold != 3 || p.Duration != 30*time.Minute || p.UntilUnlocked || p.Window != 30*time.Minute || !p.PwdNeverExpire {
		t.Errorf("policy %+v, %v", p, err)
	}
	pso := ldap.NewEntry("CN=scan,CN=Password Settings Container", map[string][]string{
		"msDS-LockoutThreshold": {"10"}, "msDS-LockoutDuration": {"0"}, "msDS-MaximumPasswordAge": {"-25920000000000"},
	})
	p, err = parsePolicy(pso, psoPolicyAttrs, "pso")
	if err != nil || p.Threshold != 10 || !p.UntilUnlocked || p.MaxPwdAge != 720*time.Hour || p.PwdNeverExpire || p.Source != "pso" {
		t.Errorf("pso policy %+v, %v", p, err)
	}
	if _, err := parsePolicy(ldap.NewEntry("x", map[string][]string{"lockoutThreshold": {"-1"}}), domainPolicyAttrs, "d"); err == nil {
		t.Error("negative threshold accepted")
	}
}
