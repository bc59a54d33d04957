// Package summary is the headline of the overview, of GET /api/v1/summary
// and of `scanwarden status`: one sentence that says whether scanning
// works, the scans held for failing destinations, and the oldest open
// incident. It is a pure function of what the web backends or the store
// read, so the page and the shell say the same words.
package summary

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/warning"
)

// Destination is what the headline needs of one destination.
type Destination struct {
	Name string
	// Checked is false while it has never been checked.
	Checked bool
	// Cause is the last check's verdict (scanwarden.CauseOK when it passed).
	Cause     scanwarden.Cause
	LastCheck time.Time
	// FailingSince is when its open incident opened (zero: none open).
	FailingSince time.Time
	// Held is how many of its scans the fallback share holds.
	Held int
}

// Incident is an open incident.
type Incident struct {
	ID          int64            `json:"id"`
	Destination string           `json:"destination"`
	Cause       scanwarden.Cause `json:"cause,omitempty"`
	OpenedAt    time.Time        `json:"opened_at"`
}

// Input is everything the headline is made of.
type Input struct {
	Destinations  []Destination
	OpenIncidents []Incident
	// Held is every scan the fallback share holds (also for names no longer
	// registered).
	Held int
	// Warnings are what will fail days ahead, grouped (warning.Groups).
	Warnings []warning.Group
	// Groups are the open incident groups: one cause on one server or
	// account (incident.Regroup); the sentence names them first.
	Groups []incident.Group
	// Now sets the clock and the time zone the sentence is written in.
	Now time.Time
}

// States of the whole fleet.
const (
	StateEmpty     = "empty"     // no destination registered
	StateOK        = "ok"        // every destination accepts scans
	StateFailing   = "failing"   // at least one fails
	StateUnchecked = "unchecked" // none fails, some were never checked
)

// Failure is one failing destination.
type Failure struct {
	Destination string           `json:"destination"`
	Cause       scanwarden.Cause `json:"cause"`
	// Since is when its open incident opened, else its last check.
	Since time.Time `json:"since"`
	Held  int       `json:"held_scans"`
}

// Summary is the headline. Fields are added, never renamed: the API and
// the status command's --json print it as it is.
type Summary struct {
	State    string `json:"state"`
	Sentence string `json:"sentence"`
	// Destinations counts every registered one; Accepting those whose last
	// check passed.
	Destinations int       `json:"destinations"`
	Accepting    int       `json:"accepting"`
	Failing      []Failure `json:"failing"`
	Unchecked    []string  `json:"unchecked"`
	HeldScans    int       `json:"held_scans"`
	// OldestIncident is the open incident opened first, nil when none.
	OldestIncident *Incident `json:"oldest_incident,omitempty"`
	// Warnings counts what will fail days ahead although the checks pass
	// (one per account or volume); ComingUp lists them, soonest first.
	Warnings int             `json:"warnings"`
	ComingUp []warning.Group `json:"coming_up"`
	// Causes are the open incident groups, each one cause on one server
	// or account with the destinations it makes fail.
	Causes []Cause `json:"causes"`
	// Bridges are the bridged destinations with their bridge's own health
	// (filled by the reader: the store and the share's probe).
	Bridges []Bridge `json:"bridges"`
}

// Bridge is a bridged destination and its bridge's health.
type Bridge struct {
	Destination string        `json:"destination"`
	Health      bridge.Health `json:"health"`
}

// Build makes the headline. Failing destinations come oldest failure
// first; at most three are named in the sentence.
func Build(in Input) Summary {
	s := Summary{State: StateOK, Destinations: len(in.Destinations), HeldScans: in.Held,
		Failing: []Failure{}, Unchecked: []string{}}
	for _, d := range in.Destinations {
		switch {
		case !d.Checked:
			s.Unchecked = append(s.Unchecked, d.Name)
		case d.Cause == scanwarden.CauseOK:
			s.Accepting++
		default:
			since := d.FailingSince
			if since.IsZero() {
				since = d.LastCheck
			}
			s.Failing = append(s.Failing, Failure{Destination: d.Name, Cause: d.Cause, Since: since, Held: d.Held})
		}
	}
	sort.SliceStable(s.Failing, func(i, j int) bool {
		a, b := s.Failing[i], s.Failing[j]
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return a.Destination < b.Destination
	})
	sort.Strings(s.Unchecked)
	for _, inc := range in.OpenIncidents {
		if s.OldestIncident == nil || inc.OpenedAt.Before(s.OldestIncident.OpenedAt) {
			x := inc
			s.OldestIncident = &x
		}
	}
	switch {
	case s.Destinations == 0:
		s.State = StateEmpty
	case len(s.Failing) > 0:
		s.State = StateFailing
	case len(s.Unchecked) > 0:
		s.State = StateUnchecked
	}
	s.Sentence = sentence(s, in.Now)
	s.Causes = causes(in.Groups)
	if s.State == StateFailing && len(s.Causes) > 0 {
		var rest []Failure
		for _, f := range s.Failing {
			if incident.GroupOf(in.Groups, f.Destination) == nil {
				rest = append(rest, f)
			}
		}
		s.Sentence = groupedSentence(s, in.Groups, rest, in.Now)
	}
	s.ComingUp = append([]warning.Group{}, in.Warnings...)
	s.Warnings = len(s.ComingUp)
	if s.Warnings > 0 && s.State != StateEmpty {
		s.Sentence += "; " + plural(s.Warnings, "warning", "warnings") + " coming up: " + s.ComingUp[0].Headline
		if s.Warnings > 1 {
			s.Sentence += ", …"
		}
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func sentence(s Summary, now time.Time) string {
	switch s.State {
	case StateEmpty:
		return "No destinations yet: import a device's address book or add one"
	case StateOK:
		if s.Destinations == 1 {
			return "The 1 destination accepts scans"
		}
		return fmt.Sprintf("All %d destinations accept scans", s.Destinations)
	case StateUnchecked:
		if s.Accepting == 0 {
			return plural(len(s.Unchecked), "destination", "destinations") + " not checked yet"
		}
		return fmt.Sprintf("%d of %d destinations accept scans, %d not checked yet", s.Accepting, s.Destinations, len(s.Unchecked))
	}
	return failingSentence(s, now)
}

// failingSentence names the failing destinations, at most three.
func failingSentence(s Summary, now time.Time) string {
	var parts []string
	for i, f := range s.Failing {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(s.Failing)-3))
			break
		}
		p := fmt.Sprintf("%s — %s since %s", f.Destination, f.Cause, clock(f.Since, now))
		if f.Held > 0 {
			p += ", " + plural(f.Held, "scan held", "scans held")
		}
		parts = append(parts, p)
	}
	return plural(len(s.Failing), "destination", "destinations") + " failing: " + strings.Join(parts, "; ")
}

// clock writes t as the hour when it is today in now's zone ("10:42"), else
// with its date ("Nov 30 10:42").
func clock(t, now time.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	if now.IsZero() {
		now = time.Now()
	}
	t = t.In(now.Location())
	y1, m1, d1 := t.Date()
	y2, m2, d2 := now.Date()
	if y1 == y2 && m1 == m2 && d1 == d2 {
		return t.Format("15:04")
	}
	if y1 == y2 {
		return t.Format("Jan 2 15:04")
	}
	return t.Format("Jan 2 2006 15:04")
}
