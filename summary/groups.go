package summary

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden/incident"
)

// Cause is one open incident group: one cause on one server or account,
// with the destinations it makes fail.
type Cause struct {
	ID           int64    `json:"id"`
	Kind         string   `json:"kind"` // "server" or "account"
	Subject      string   `json:"subject"`
	Cause        string   `json:"cause"`
	Headline     string   `json:"headline"` // "fs9.office.lan (3 destinations) does not resolve"
	Destinations []string `json:"destinations"`
}

// causes lists the open groups with members, oldest first.
func causes(gs []incident.Group) []Cause {
	out := []Cause{}
	for _, g := range gs {
		if g.State != incident.StateOpen || len(g.Members) == 0 {
			continue
		}
		out = append(out, Cause{ID: g.ID, Kind: string(g.Kind), Subject: g.Subject, Cause: string(g.Cause), Headline: g.Headline(),
			Destinations: slices.Clone(g.Members)})
	}
	return out
}

// groupedSentence names the causes first — "2 file servers unreachable:
// fs9.office.lan (3 destinations) does not resolve, 192.168.1.20 refuses
// (3)" — then the other groups, then the failing destinations no group
// holds, as the ungrouped sentence would.
func groupedSentence(s Summary, gs []incident.Group, rest []Failure, now time.Time) string {
	var unreachable, other []string
	for _, g := range gs {
		if g.State != incident.StateOpen || len(g.Members) == 0 {
			continue
		}
		if g.Unreachable() {
			if len(unreachable) == 0 {
				unreachable = append(unreachable, g.Headline())
			} else {
				unreachable = append(unreachable, fmt.Sprintf("%s %s (%d)", g.Subject, g.Phrase, len(g.Members)))
			}
			continue
		}
		other = append(other, g.Headline())
	}
	var parts []string
	if len(unreachable) > 0 {
		parts = append(parts, plural(len(unreachable), "file server", "file servers")+" unreachable: "+strings.Join(unreachable, ", "))
	}
	parts = append(parts, other...)
	if len(rest) > 0 {
		r := s
		r.Failing = rest
		more := failingSentence(r, now)
		if len(parts) > 0 {
			more = "also " + more
		}
		parts = append(parts, more)
	}
	return strings.Join(parts, "; ")
}
