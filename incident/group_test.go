package incident

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// TestRegroup: the group rules as a table — a group opens with its first
// destination and closes with its last (one notice each), joining and
// leaving an open group is silent, a cause change moves a destination, and
// a group closed within ReopenWithin reopens (same ID) rather than a new
// one opening.
func TestRegroup(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	fs9 := &Key{Kind: GroupServer, Subject: "fs9.office.lan", Cause: scanwarden.CauseNameUnresolved, Phrase: "does not resolve"}
	ghost := &Key{Kind: GroupServer, Subject: "192.168.1.20", Cause: scanwarden.CauseHostUnreachable, Phrase: "refuses"}
	walt := &Key{Kind: GroupAccount, Subject: `OFFICE\walt`, Cause: scanwarden.CauseAccountLocked, Phrase: "is locked out"}
	open := func(id int64, k *Key, members ...string) Group {
		return Group{ID: id, Key: *k, State: StateOpen, Members: members, OpenedAt: t0}
	}
	closed := func(id int64, k *Key, at time.Time) Group {
		return Group{ID: id, Key: *k, State: StateClosed, OpenedAt: t0, ClosedAt: at}
	}
	now := t0.Add(time.Hour)
	for _, tc := range []struct {
		name    string
		groups  []Group
		dest    string
		key     *Key
		changed string // "id:state:members;…" of the changed groups
		notices string // "change:id;…"
	}{
		{"first failure opens a group", nil, "a", fs9, "0:open:a", "opened:0"},
		{"second destination joins silently", []Group{open(1, fs9, "a")}, "b", fs9, "1:open:a,b", ""},
		{"already in it: nothing", []Group{open(1, fs9, "a", "b")}, "B", fs9, "", ""},
		{"another server: its own group", []Group{open(1, fs9, "a")}, "c", ghost, "0:open:c", "opened:0"},
		{"one leaves, the group stays, silently", []Group{open(1, fs9, "a", "b")}, "a", nil, "1:open:b", ""},
		{"the last leaves: closed, one notice", []Group{open(1, fs9, "b")}, "b", nil, "1:closed:", "closed:1"},
		{"not in a group and not groupable: nothing", []Group{open(1, fs9, "b")}, "z", nil, "", ""},
		{"cause changes: moves, the old one closes", []Group{open(1, fs9, "a"), open(2, walt, "x")}, "a", walt,
			"1:closed:;2:open:a,x", "closed:1"},
		{"fails again within the flap window: the same group reopens", []Group{closed(1, fs9, now.Add(-time.Hour))}, "a", fs9,
			"1:open:a", "reopened:1"},
		{"after the flap window: a new one", []Group{closed(1, fs9, now.Add(-ReopenWithin))}, "a", fs9, "0:open:a", "opened:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fmtGroups(tc.groups)
			changed, notices := Regroup(tc.groups, tc.dest, tc.key, now)
			if got := fmtGroups(changed); got != tc.changed {
				t.Errorf("changed %q, want %q", got, tc.changed)
			}
			var ns []string
			for _, n := range notices {
				ns = append(ns, string(n.Change)+":"+itoa(n.Group.ID))
			}
			if got := strings.Join(ns, ";"); got != tc.notices {
				t.Errorf("notices %q, want %q", got, tc.notices)
			}
			if fmtGroups(tc.groups) != before {
				t.Errorf("Regroup modified its input")
			}
		})
	}
}

func fmtGroups(gs []Group) string {
	var out []string
	for _, g := range gs {
		out = append(out, itoa(g.ID)+":"+string(g.State)+":"+strings.Join(g.Members, ","))
	}
	return strings.Join(out, ";")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestKeyOf: which failing checks share a group, and which are the
// destination's own.
func TestKeyOf(t *testing.T) {
	rep := func(c scanwarden.Cause, steps ...smbcheck.Step) smbcheck.Report {
		return smbcheck.Report{Target: scanwarden.TargetInfo{Host: "fs9.office.lan", Share: "scans", User: "walt"},
			Verdict: smbcheck.Verdict{Cause: c}, Steps: steps}
	}
	tcp := func(errno string) smbcheck.Step {
		return smbcheck.Step{ID: smbcheck.StepTCP, Status: smbcheck.StatusFail, Evidence: smbcheck.Evidence{"errno": errno}}
	}
	ad := smbcheck.Step{ID: smbcheck.StepAD, Status: smbcheck.StatusOK, Evidence: smbcheck.Evidence{"account": `OFFICE\walt`}}
	for _, tc := range []struct {
		name string
		rep  smbcheck.Report
		want string // Key.ID(), "" for nil
	}{
		{"passes", rep(scanwarden.CauseOK), ""},
		{"does not resolve", rep(scanwarden.CauseNameUnresolved), "server|fs9.office.lan|name-unresolved|does not resolve"},
		{"not in DNS", rep(scanwarden.CauseNameNotInDNS), "server|fs9.office.lan|name-not-in-dns|is not in DNS"},
		{"refuses", rep(scanwarden.CauseHostUnreachable, tcp("ECONNREFUSED")), "server|fs9.office.lan|host-unreachable|refuses"},
		{"unreachable", rep(scanwarden.CauseHostUnreachable, tcp("EHOSTUNREACH")), "server|fs9.office.lan|host-unreachable|is unreachable"},
		{"does not answer", rep(scanwarden.CauseTimeout, smbcheck.Step{ID: smbcheck.StepTCP, Status: smbcheck.StatusFail}),
			"server|fs9.office.lan|timeout|does not answer"},
		{"a write that timed out is the destination's own", rep(scanwarden.CauseTimeout), ""},
		{"share gone", rep(scanwarden.CauseShareNotFound), "server|fs9.office.lan|share-not-found|has no share scans"},
		{"locked, by the directory's name", rep(scanwarden.CauseAccountLocked, ad), `account|office\walt|account-locked|is locked out`},
		{"password wrong, no directory", rep(scanwarden.CauseBadCredentials), "account|walt on fs9.office.lan|bad-credentials|has a wrong password stored"},
		{"a folder's permission is the destination's own", rep(scanwarden.CauseNoWritePermission), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if k := KeyOf(tc.rep); k != nil {
				got = k.ID()
			}
			if got != tc.want {
				t.Errorf("key %q, want %q", got, tc.want)
			}
		})
	}
}
