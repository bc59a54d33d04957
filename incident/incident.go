// Package incident holds what an incident is and the rules that open,
// update, close and reopen one. The rules are one pure function, Next, of
// (current state, input, now, close_after): no clock, no I/O, no SQL. The
// store keeps incidents and their timelines; the monitor feeds the inputs.
//
// The rules (issue 11):
//   - one open incident per destination at a time;
//   - it opens on a failing check or on a device's send failure;
//   - a cause change inside an open incident is an update, on its timeline;
//   - it closes only when checks have been green for close_after with no new
//     device failure in that span;
//   - it reopens (same incident, one more flap) when the destination fails
//     again within ReopenWithin of its close.
package incident

import (
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// ReopenWithin is how long after its close an incident is reopened, rather
// than a new one opened, when its destination fails again.
const ReopenWithin = 24 * time.Hour

// State of an incident.
type State string

// States.
const (
	StateOpen   State = "open"
	StateClosed State = "closed"
)

// Incident is one spell of trouble with one destination.
type Incident struct {
	ID          int64  `json:"id"`
	Destination string `json:"destination"`
	Device      string `json:"device"` // the device the destination belongs to, or that reported the failure
	State       State  `json:"state"`
	// Cause is the current cause; "" while only a device failure is known
	// and no check has named one.
	Cause       scanwarden.Cause `json:"cause"`
	KyoceraCode string           `json:"kyocera_code"`
	Summary     string           `json:"summary"`
	Fix         string           `json:"fix"`
	OpenedAt    time.Time        `json:"opened_at"`
	ClosedAt    time.Time        `json:"closed_at"` // zero while open
	// LastFailure is the last failing check or device send failure.
	LastFailure time.Time `json:"last_failure"`
	// GreenSince is the first green check after the last failure; zero
	// when the last check failed or no green check came since.
	GreenSince time.Time `json:"green_since"`
	// Flaps counts reopenings.
	Flaps int `json:"flaps"`
	// AffectedJobs counts the device send failures seen during the incident.
	AffectedJobs int `json:"affected_jobs"`
}

// Open reports whether the incident is open.
func (i *Incident) Open() bool { return i != nil && i.State == StateOpen }

// CloseDue is the moment from which the incident may close: close_after
// after the later of its green span's start and its last failure. It is
// zero when the incident is not open or no green check came since the last
// failure. The rules close it at the first input at or after that moment
// (the monitor checks the destination then: a fresh check proves it is
// still green); a failure before then clears the green span.
func (i *Incident) CloseDue(closeAfter time.Duration) time.Time {
	if !i.Open() || i.GreenSince.IsZero() {
		return time.Time{}
	}
	from := i.GreenSince
	if i.LastFailure.After(from) {
		from = i.LastFailure
	}
	return from.Add(closeAfter)
}

// Kind of input.
type Kind string

// Input kinds.
const (
	// KindCheck is a check report of the destination.
	KindCheck Kind = "check"
	// KindDeviceFailure is a send failure the device reported for the
	// destination (poll, trap or e-mail).
	KindDeviceFailure Kind = "device-failure"
	// KindDelivery is a held scan delivered to (or failed at) the destination.
	KindDelivery Kind = "delivery"
	// KindTick only lets time pass: an incident that is due closes.
	KindTick Kind = "tick"
)

// Input is one thing that happened to a destination.
type Input struct {
	Kind        Kind
	At          time.Time
	Destination string
	// Device names the device (a check: the destination's device; a device
	// failure: the device that reported it).
	Device string
	// Check: the verdict of the report and its stored id; Evidence, the
	// file server's own story about a failing check (its event log read
	// with a separate account), one line each: on the timeline beside the
	// check, never the verdict; Group, the group its cause puts the
	// destination in (KeyOf; nil: its own cause).
	Verdict  smbcheck.Verdict
	ReportID int64
	Evidence []string
	Group    *Key
	// Device failure: the panel code and the device's words.
	Code    string
	Text    string
	EventID int64
	// Delivery: whether it succeeded, and what.
	Delivered bool
	// Bridged: a check of a bridged destination (the MFP scans to the
	// fallback share, scanwarden delivers). A green one closes at once an
	// incident whose cause is one of the device's client
	// (smbcheck.ClientCause): the bridge is the standing answer to it.
	Bridged bool
}

func (in Input) failing() bool {
	switch in.Kind {
	case KindCheck:
		return in.Verdict.Cause != scanwarden.CauseOK
	case KindDeviceFailure:
		return true
	case KindDelivery:
		return !in.Delivered
	}
	return false
}

// EntryKind says what a timeline entry records.
type EntryKind string

// Timeline entry kinds.
const (
	EntryOpened       EntryKind = "opened"
	EntryReopened     EntryKind = "reopened"
	EntryClosed       EntryKind = "closed"
	EntryCauseChanged EntryKind = "cause-changed"
	EntryCheck        EntryKind = "check"
	EntryServerLog    EntryKind = "server-log"
	EntryDeviceEvent  EntryKind = "device-failure"
	EntryDelivery     EntryKind = "delivery"
	EntryNotification EntryKind = "notification"
)

// Entry is one line of an incident's timeline.
type Entry struct {
	At       time.Time        `json:"at"`
	Kind     EntryKind        `json:"kind"`
	Cause    scanwarden.Cause `json:"cause,omitempty"`
	Code     string           `json:"kyocera_code,omitempty"`
	Text     string           `json:"text"`
	ReportID int64            `json:"report_id,omitempty"`
	EventID  int64            `json:"event_id,omitempty"`
}

// Change is what Next did to the incident, as notifications name it.
type Change string

// Changes. Reopened is notified as "incident.opened" (same id).
const (
	Unchanged Change = ""
	Opened    Change = "opened"
	Reopened  Change = "reopened"
	Updated   Change = "updated" // the cause changed
	Closed    Change = "closed"
)

// Event is the notification event name of a change ("" for Unchanged).
func (c Change) Event() string {
	switch c {
	case Opened, Reopened:
		return "incident.opened"
	case Updated:
		return "incident.updated"
	case Closed:
		return "incident.closed"
	}
	return ""
}

// Result is the outcome of Next: the incident to keep (nil when there is
// none and none opened), what changed, and the timeline entries to append.
type Result struct {
	Incident *Incident
	Change   Change
	Changes  []Change // Fold: every change, in order
	Entries  []Entry
}

// Fold applies inputs in order, as Next does one by one, and returns the
// final incident, every entry, and the changes in order (Changes of the
// Result: at most one each of opened/reopened, updated and closed, in the
// order they happened). A device failure followed by the check it
// triggered opens one incident with the check's cause and no update.
func Fold(cur *Incident, ins []Input, now time.Time, closeAfter time.Duration) Result {
	out := Result{Incident: cur}
	seen := map[Change]bool{}
	stored := false
	for _, in := range ins {
		r := Next(out.Incident, in, now, closeAfter)
		if r.Incident == nil {
			continue
		}
		stored = true
		out.Incident = r.Incident
		out.Entries = append(out.Entries, r.Entries...)
		if r.Change != Unchanged && !seen[r.Change] {
			seen[r.Change] = true
			out.Changes = append(out.Changes, r.Change)
		}
	}
	if len(out.Changes) > 0 {
		out.Change = out.Changes[len(out.Changes)-1]
	}
	if !stored {
		out.Incident = nil
	}
	return out
}

// Next applies one input to the destination's latest incident cur (nil when
// it never had one; open or closed otherwise) at time now. It does not
// modify cur. A Result with a nil Incident means nothing is to be stored.
func Next(cur *Incident, in Input, now time.Time, closeAfter time.Duration) Result {
	var inc *Incident
	if cur != nil {
		c := *cur
		inc = &c
	}
	if in.At.IsZero() {
		in.At = now
	}
	failing := in.failing()

	switch {
	case inc.Open():
		return nextOpen(inc, in, failing, now, closeAfter)
	case !failing:
		// Nothing is wrong and nothing is open: a delivery or a green check
		// of a healthy destination is not an incident's business.
		return Result{}
	case inc != nil && !inc.ClosedAt.IsZero() && now.Sub(inc.ClosedAt) < ReopenWithin:
		inc.State = StateOpen
		inc.ClosedAt = time.Time{}
		inc.Flaps++
		inc.GreenSince = time.Time{}
		inc.LastFailure = in.At
		entries := []Entry{{At: now, Kind: EntryReopened, Text: "failed again within 24 h of its close"}}
		entries = append(entries, apply(inc, in)...)
		return Result{Incident: inc, Change: Reopened, Entries: entries}
	default:
		inc = &Incident{State: StateOpen, OpenedAt: now, LastFailure: in.At}
		entries := []Entry{{At: now, Kind: EntryOpened}}
		entries = append(entries, apply(inc, in)...)
		entries[0].Cause, entries[0].Code = inc.Cause, inc.KyoceraCode
		return Result{Incident: inc, Change: Opened, Entries: entries}
	}
}

func nextOpen(inc *Incident, in Input, failing bool, now time.Time, closeAfter time.Duration) Result {
	before := inc.Cause
	entries := apply(inc, in)
	if failing {
		inc.LastFailure = in.At
		inc.GreenSince = time.Time{}
		if inc.Cause != before && before != "" {
			entries = append(entries, Entry{At: now, Kind: EntryCauseChanged, Cause: inc.Cause, Code: inc.KyoceraCode,
				Text: string(before) + " → " + string(inc.Cause)})
			return Result{Incident: inc, Change: Updated, Entries: entries}
		}
		return Result{Incident: inc, Entries: entries}
	}
	if in.Kind == KindCheck && inc.GreenSince.IsZero() {
		inc.GreenSince = in.At
	}
	if in.Kind == KindCheck && in.Bridged && bridgedAway(inc.Cause) {
		inc.State = StateClosed
		inc.ClosedAt = now
		entries = append(entries, Entry{At: now, Kind: EntryClosed, Cause: inc.Cause,
			Text: "bridged: the MFP scans to the fallback share and scanwarden delivers; the bridge's own check is green"})
		return Result{Incident: inc, Change: Closed, Entries: entries}
	}
	if !inc.GreenSince.IsZero() && now.Sub(inc.GreenSince) >= closeAfter && now.Sub(inc.LastFailure) >= closeAfter {
		inc.State = StateClosed
		inc.ClosedAt = now
		entries = append(entries, Entry{At: now, Kind: EntryClosed, Cause: inc.Cause,
			Text: "green for " + closeAfter.String() + " with no device failure"})
		return Result{Incident: inc, Change: Closed, Entries: entries}
	}
	return Result{Incident: inc, Entries: entries}
}

// bridgedAway reports whether the bridge answers an incident of cause: a
// cause of the device's client that scanwarden's own does not have (the
// device's profile is not at hand here; ntlm-blocked and
// account-restricted count, as a bridged destination's own check passed).
func bridgedAway(c scanwarden.Cause) bool {
	return smbcheck.ClientCause(c, smbcheck.Device{NoKerberos: true})
}

// apply records the input on the incident (cause, jobs) and returns its
// timeline entry. Tick records nothing.
func apply(inc *Incident, in Input) []Entry {
	if inc.Destination == "" {
		inc.Destination = in.Destination
	}
	if in.Device != "" && inc.Device == "" {
		inc.Device = in.Device
	}
	switch in.Kind {
	case KindCheck:
		v := in.Verdict
		if v.Cause != scanwarden.CauseOK {
			inc.Cause, inc.KyoceraCode, inc.Summary, inc.Fix = v.Cause, v.KyoceraCode, v.Summary, v.Fix
		}
		out := []Entry{{At: in.At, Kind: EntryCheck, Cause: v.Cause, Code: v.KyoceraCode, Text: v.Summary, ReportID: in.ReportID}}
		if v.Cause != scanwarden.CauseOK {
			for _, l := range in.Evidence {
				out = append(out, Entry{At: in.At, Kind: EntryServerLog, Text: l, ReportID: in.ReportID})
			}
		}
		return out
	case KindDeviceFailure:
		inc.AffectedJobs++
		if inc.Cause == "" && inc.KyoceraCode == "" {
			inc.KyoceraCode = in.Code
			inc.Summary = "The device reported send error " + in.Code + "; no check has named the cause yet."
			if in.Code == "" {
				inc.Summary = "The device reported a send failure; no check has named the cause yet."
			}
		}
		return []Entry{{At: in.At, Kind: EntryDeviceEvent, Code: in.Code, Text: in.Text, EventID: in.EventID}}
	case KindDelivery:
		text := "held scan delivered"
		if !in.Delivered {
			text = "delivery of a held scan failed"
		}
		if in.Text != "" {
			text += ": " + in.Text
		}
		return []Entry{{At: in.At, Kind: EntryDelivery, Text: text}}
	}
	return nil
}
