package incident

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// One cause, one incident (issue 30): destinations that fail for the same
// reason on the same server (its name does not resolve, it refuses, it
// does not answer, a share is gone) or with the same account (locked,
// disabled, expired, password wrong) are one group, opened with one notice
// when the first joins and closed with one when the last leaves. Each
// destination keeps its own incident and timeline; the group is what the
// admin is told of and what the headline names.

// GroupKind says what the members share.
type GroupKind string

// Group kinds.
const (
	GroupServer  GroupKind = "server"
	GroupAccount GroupKind = "account"
)

// Key is one cause on one server or account: what a group is of.
type Key struct {
	Kind    GroupKind        `json:"kind"`
	Subject string           `json:"subject"` // the server as the destinations name it, or DOMAIN\account
	Cause   scanwarden.Cause `json:"cause"`
	// Phrase says the cause about the subject: "does not resolve",
	// "refuses", "is locked out".
	Phrase string `json:"phrase"`
}

// ID identifies the key (case-insensitive in the subject).
func (k Key) ID() string {
	return string(k.Kind) + "|" + strings.ToLower(k.Subject) + "|" + string(k.Cause) + "|" + k.Phrase
}

// Unreachable reports whether the key is a server that cannot be reached
// at all (the headline counts those as "file servers unreachable").
func (k Key) Unreachable() bool {
	return k.Kind == GroupServer && (k.Cause == scanwarden.CauseNameUnresolved || k.Cause == scanwarden.CauseNameNotInDNS || k.Cause == scanwarden.CauseHostUnreachable ||
		k.Cause == scanwarden.CauseTimeout)
}

// KeyOf is the group a failing check's report belongs to; nil when it
// passed, or its cause is the destination's own (a folder's permission, a
// full disk: one destination, one incident).
func KeyOf(rep smbcheck.Report) *Key {
	v := rep.Verdict.Cause
	host := strings.Trim(rep.Target.Host, "[]")
	server := func(phrase string) *Key {
		return &Key{Kind: GroupServer, Subject: host, Cause: v, Phrase: phrase}
	}
	account := func(phrase string) *Key {
		who := ""
		if s := rep.Step(smbcheck.StepAD); s != nil {
			who, _ = s.Evidence["account"].(string)
		}
		if who == "" || who == "local to the server" {
			who = rep.Target.User + " on " + host
		}
		return &Key{Kind: GroupAccount, Subject: who, Cause: v, Phrase: phrase}
	}
	switch v {
	case scanwarden.CauseNameUnresolved:
		return server("does not resolve")
	case scanwarden.CauseNameNotInDNS:
		return server("is not in DNS")
	case scanwarden.CauseHostUnreachable:
		if s := rep.Step(smbcheck.StepTCP); s != nil && s.Evidence["errno"] == "ECONNREFUSED" {
			return server("refuses")
		}
		return server("is unreachable")
	case scanwarden.CauseTimeout:
		if s := rep.Step(smbcheck.StepTCP); s != nil && s.Status == smbcheck.StatusFail {
			return server("does not answer")
		}
		if s := rep.Step(smbcheck.StepNegotiate); s != nil && s.Status == smbcheck.StatusFail {
			return server("does not answer")
		}
		return nil
	case scanwarden.CauseShareNotFound:
		return server("has no share " + rep.Target.Share)
	case scanwarden.CauseAccountLocked:
		return account("is locked out")
	case scanwarden.CauseAccountDisabled:
		return account("is disabled")
	case scanwarden.CauseAccountExpired:
		return account("has expired")
	case scanwarden.CausePasswordExpired:
		return account("has an expired password")
	case scanwarden.CausePasswordMustChange:
		return account("must change its password")
	case scanwarden.CauseBadCredentials:
		return account("has a wrong password stored")
	}
	return nil
}

// Group is one cause's incident as the admin sees it.
type Group struct {
	ID int64 `json:"id"`
	Key
	State    State     `json:"state"`
	Members  []string  `json:"destinations"` // the destinations in it now, sorted
	OpenedAt time.Time `json:"opened_at"`
	ClosedAt time.Time `json:"closed_at,omitzero"`
}

// Headline says the group: "fs9.office.lan (3 destinations) does not
// resolve".
func (g Group) Headline() string {
	n := len(g.Members)
	if g.State == StateClosed {
		return fmt.Sprintf("%s: %s is over", g.Subject, g.Cause)
	}
	s := "destinations"
	if n == 1 {
		s = "destination"
	}
	return fmt.Sprintf("%s (%d %s) %s", g.Subject, n, s, g.Phrase)
}

// GroupNotice is one notice a regrouping gives: a group opened (or
// reopened within ReopenWithin of its close) or closed.
type GroupNotice struct {
	Change Change
	Group  Group
}

// Regroup moves destination into the group of key (nil: into none — it
// passed for good, or its cause is its own) among groups (the open ones and
// those closed within ReopenWithin; it does not modify them) at now. It
// returns the groups that changed (ID 0: a new one) and the notices: a
// group opens when its first destination joins and closes when its last
// leaves; joining or leaving a group that stays open is silent.
func Regroup(groups []Group, destination string, key *Key, now time.Time) (changed []Group, notices []GroupNotice) {
	dest := strings.ToLower(destination)
	gs := make([]Group, len(groups))
	for i, g := range groups {
		g.Members = slices.Clone(g.Members)
		gs[i] = g
	}
	touched := map[int]bool{}
	for i := range gs {
		g := &gs[i]
		at := slices.IndexFunc(g.Members, func(m string) bool { return strings.ToLower(m) == dest })
		if g.State != StateOpen || at < 0 {
			continue
		}
		if key != nil && g.Key.ID() == key.ID() {
			return nil, nil // already there
		}
		g.Members = slices.Delete(g.Members, at, at+1)
		touched[i] = true
		if len(g.Members) == 0 {
			g.State, g.ClosedAt = StateClosed, now
			notices = append(notices, GroupNotice{Change: Closed, Group: *g})
		}
	}
	if key != nil {
		join := -1
		for i := range gs {
			if gs[i].Key.ID() == key.ID() && gs[i].State == StateOpen {
				join = i
			}
		}
		if join < 0 {
			for i := range gs {
				g := gs[i]
				if g.Key.ID() == key.ID() && g.State == StateClosed && now.Sub(g.ClosedAt) < ReopenWithin && !touched[i] &&
					(join < 0 || g.ClosedAt.After(gs[join].ClosedAt)) {
					join = i
				}
			}
			if join >= 0 {
				g := &gs[join]
				g.State, g.ClosedAt, g.Members = StateOpen, time.Time{}, nil
				g.Members = append(g.Members, destination)
				touched[join] = true
				notices = append(notices, GroupNotice{Change: Reopened, Group: *g})
			} else {
				g := Group{Key: *key, State: StateOpen, Members: []string{destination}, OpenedAt: now}
				gs = append(gs, g)
				touched[len(gs)-1] = true
				notices = append(notices, GroupNotice{Change: Opened, Group: g})
			}
		} else {
			g := &gs[join]
			g.Members = append(g.Members, destination)
			slices.SortFunc(g.Members, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
			touched[join] = true
		}
	}
	for i := range gs {
		if touched[i] {
			changed = append(changed, gs[i])
		}
	}
	return changed, notices
}

// GroupOf is the open group destination is in (nil: none).
func GroupOf(groups []Group, destination string) *Group {
	for i := range groups {
		g := &groups[i]
		if g.State == StateOpen && slices.ContainsFunc(g.Members, func(m string) bool { return strings.EqualFold(m, destination) }) {
			return g
		}
	}
	return nil
}
