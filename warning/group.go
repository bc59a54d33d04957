package warning

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Row is one destination's warning as the store keeps it.
type Row struct {
	Destination string
	Device      string // the MFP it belongs to ("" when none)
	Since       time.Time
	Updated     time.Time
	Warning
}

// Group is one warning as the admin must act on it: one account (or
// volume), every destination and MFP it will make fail.
type Group struct {
	Kind         Kind      `json:"kind"`
	Subject      string    `json:"subject"`
	Headline     string    `json:"headline"`
	Summary      string    `json:"summary"` // the headline with what will fail: "… 12 destinations on 3 MFPs will fail with 1102"
	Fix          string    `json:"fix"`
	Text         string    `json:"text"` // Summary; Fix — the one message
	Due          time.Time `json:"due,omitzero"`
	KyoceraCode  string    `json:"kyocera_code"`
	Destinations []string  `json:"destinations"`
	Devices      []string  `json:"devices"`
	Since        time.Time `json:"since"`
}

// Key identifies the group (Warning.Key).
func (g Group) Key() string { return string(g.Kind) + " " + strings.ToLower(g.Subject) }

// Groups folds rows into one group per kind and subject, the soonest due
// first (undated ones after the dated), then by kind and subject. The
// headline, fix and due come from the group's most recently updated row.
func Groups(rows []Row) []Group {
	idx := map[string]int{}
	var out []Group
	latest := map[string]time.Time{}
	for _, r := range rows {
		k := r.Key()
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Group{Kind: r.Kind, Subject: r.Subject, Since: r.Since})
		}
		g := &out[i]
		if !ok || r.Updated.After(latest[k]) {
			latest[k] = r.Updated
			g.Subject, g.Headline, g.Fix, g.Due, g.KyoceraCode = r.Subject, r.Headline, r.Fix, r.Due, r.KyoceraCode
		}
		if r.Since.Before(g.Since) {
			g.Since = r.Since
		}
		if !slices.Contains(g.Destinations, r.Destination) {
			g.Destinations = append(g.Destinations, r.Destination)
		}
		if r.Device != "" && !slices.Contains(g.Devices, r.Device) {
			g.Devices = append(g.Devices, r.Device)
		}
	}
	for i := range out {
		g := &out[i]
		sort.Strings(g.Destinations)
		sort.Strings(g.Devices)
		if g.Devices == nil {
			g.Devices = []string{}
		}
		g.Summary = fmt.Sprintf("%s: %s will fail with %s", g.Headline, impact(len(g.Destinations), len(g.Devices)), g.KyoceraCode)
		g.Text = g.Summary + "; " + g.Fix
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Due.IsZero() != b.Due.IsZero():
			return !a.Due.IsZero()
		case !a.Due.Equal(b.Due):
			return a.Due.Before(b.Due)
		case a.Kind != b.Kind:
			return slices.Index(Kinds, a.Kind) < slices.Index(Kinds, b.Kind)
		}
		return a.Key() < b.Key()
	})
	return out
}

// impact: "1 destination", "12 destinations on 3 MFPs".
func impact(dests, devices int) string {
	s := fmt.Sprintf("%d destination%s", dests, plural(dests))
	if devices > 0 {
		s += fmt.Sprintf(" on %d MFP%s", devices, plural(devices))
	}
	return s
}

// Changes compares the groups before and after an update: the ones that
// appeared (raised, as they are now) and the ones that went (cleared, as
// they were).
func Changes(before, after []Group) (raised, cleared []Group) {
	had := map[string]bool{}
	for _, g := range before {
		had[g.Key()] = true
	}
	has := map[string]bool{}
	for _, g := range after {
		has[g.Key()] = true
		if !had[g.Key()] {
			raised = append(raised, g)
		}
	}
	for _, g := range before {
		if !has[g.Key()] {
			cleared = append(cleared, g)
		}
	}
	return raised, cleared
}

// Update is what storing one check's warnings changed.
type Update struct {
	Warnings []Warning // the destination's warnings now
	Raised   []Group   // warnings no destination had before
	Cleared  []Group   // warnings no destination has any more
}
