package incident

import (
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
)

// View is an incident as the admin's pages and API show it: when it last
// changed, whether it is closed, its timeline as lines to read.
type View struct {
	ID           int64            `json:"id"`
	Destination  string           `json:"destination"`
	Device       string           `json:"device"`
	State        string           `json:"state"` // open | closed
	Cause        scanwarden.Cause `json:"cause"`
	KyoceraCode  string           `json:"kyocera_code"`
	Summary      string           `json:"summary"`
	Fix          string           `json:"fix"`
	OpenedAt     time.Time        `json:"opened_at"`
	UpdatedAt    time.Time        `json:"updated_at"` // its newest timeline entry, else when it opened
	ClosedAt     *time.Time       `json:"closed_at"`  // nil while open
	Flaps        int              `json:"flaps"`
	AffectedJobs int              `json:"affected_jobs"`
	Timeline     []ViewEntry      `json:"timeline"`
	// Pattern is the sentence of its destination's history (package
	// pattern), when the reader asked for one.
	Pattern string `json:"pattern,omitempty"`
}

// ViewEntry is one line of an incident's timeline as shown: a device's
// send failure is led by its Kyocera code.
type ViewEntry struct {
	At    time.Time        `json:"at"`
	Kind  string           `json:"kind"` // event | check | cause | delivery | notification | opened | closed | reopened
	Text  string           `json:"text"`
	Cause scanwarden.Cause `json:"cause,omitempty"`
}

// View is the incident with its timeline tl (in the order given) as the
// admin sees it.
func (i Incident) View(tl []Entry) View {
	v := View{ID: i.ID, Destination: i.Destination, Device: i.Device, State: string(i.State), Cause: i.Cause,
		KyoceraCode: i.KyoceraCode, Summary: i.Summary, Fix: i.Fix, OpenedAt: i.OpenedAt, UpdatedAt: i.OpenedAt,
		Flaps: i.Flaps, AffectedJobs: i.AffectedJobs, Timeline: []ViewEntry{}}
	if !i.ClosedAt.IsZero() {
		c := i.ClosedAt
		v.ClosedAt = &c
	}
	for _, e := range tl {
		text := e.Text
		if e.Code != "" && e.Kind == EntryDeviceEvent {
			text = strings.TrimSpace(e.Code + " " + text)
		}
		v.Timeline = append(v.Timeline, ViewEntry{At: e.At, Kind: string(e.Kind), Text: text, Cause: e.Cause})
		if e.At.After(v.UpdatedAt) {
			v.UpdatedAt = e.At
		}
	}
	return v
}

// EventView is a device's send failure as the events page and API show
// it. Every string is what the sender wrote: data, escaped where shown.
type EventView struct {
	ID int64 `json:"id"`
	// Device is the registered device's name, or the sender's address as
	// stored (always so for an unverified event).
	Device      string    `json:"device"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSeen    time.Time `json:"last_seen"`
	Count       int       `json:"count"`
	Code        string    `json:"code"`
	Text        string    `json:"text"`
	Destination string    `json:"destination,omitempty"`
	Source      string    `json:"source"`
	// Unverified: the sender was not proven to be the device (relay mail
	// naming no device, a trap from an allowed network that is no device).
	// Every field is then what an unknown sender wrote: attacker-controlled.
	Unverified bool `json:"unverified"`
	// Swept: the event named no destination, and this is what the checks
	// of the device's destinations found (nil: it named one, or its checks
	// are still running).
	Swept *SweepView `json:"swept,omitempty"`
}

// SweepView is what the checks after a send failure naming no destination
// found, as shown.
type SweepView struct {
	Finding string        `json:"finding"` // one sentence: the failing destination, or all accept scans now
	Checked []SweepResult `json:"checked"`
}

// View is the sweep as shown; nil for none.
func (s *Sweep) View() *SweepView {
	if s == nil {
		return nil
	}
	return &SweepView{Finding: s.Text(), Checked: append([]SweepResult(nil), s.Checked...)}
}
