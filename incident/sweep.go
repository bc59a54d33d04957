package incident

import (
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
)

// AllAcceptNow is what a sweep says when none of the device's destinations
// fails: the device's failure did not come from a destination.
const AllAcceptNow = "its destinations all accept scans now: the failure was transient or on the device"

// Sweep is what the checks of a device's destinations found after a send
// failure that named none (a console text, an alert, a job with no
// folder, a mail without one).
type Sweep struct {
	At     time.Time `json:"at"` // when the last result came in
	Device string    `json:"device"`
	// DeviceStatus is the device's own status as read with the failure
	// ("idle", "idle; errors: jammed"); "" when the report carried none
	// (a trap, a mail).
	DeviceStatus string `json:"device_status,omitempty"`
	// Checked is every destination of the device, in the order checked.
	Checked []SweepResult `json:"checked"`
}

// SweepResult is one destination's part of a sweep.
type SweepResult struct {
	Destination string           `json:"destination"`
	At          time.Time        `json:"at"` // when it was checked
	Cause       scanwarden.Cause `json:"cause"`
	Summary     string           `json:"summary"`
	// Fresh: checked for this failure; false: its last check was within
	// event_gap and is what is shown.
	Fresh bool `json:"fresh"`
	// Interrupted: its check did not finish (scanwarden was stopping).
	Interrupted bool `json:"interrupted,omitempty"`
}

// Failing lists the results whose check failed (an interrupted check is
// neither failing nor passing).
func (s Sweep) Failing() []SweepResult {
	var out []SweepResult
	for _, r := range s.Checked {
		if !r.Interrupted && r.Cause != scanwarden.CauseOK {
			out = append(out, r)
		}
	}
	return out
}

// Findings lists each destination with what its check found, for a
// timeline line: "a: ok, b: bad-credentials (checked 2 min before)".
func (s Sweep) Findings() string {
	parts := make([]string, 0, len(s.Checked))
	for _, r := range s.Checked {
		what := string(r.Cause)
		switch {
		case r.Interrupted:
			what = "check interrupted"
		case !r.Fresh:
			what += " (its check " + s.At.Sub(r.At).Round(time.Second).String() + " before)"
		}
		parts = append(parts, r.Destination+": "+what)
	}
	return strings.Join(parts, ", ")
}

// Text is the sweep's conclusion in one sentence.
func (s Sweep) Text() string {
	failing := s.Failing()
	interrupted := 0
	for _, r := range s.Checked {
		if r.Interrupted {
			interrupted++
		}
	}
	var b strings.Builder
	switch {
	case len(failing) == 1:
		fmt.Fprintf(&b, "Of %d destinations of the device, only %s fails (%s): the failure was most likely there.",
			len(s.Checked), failing[0].Destination, failing[0].Cause)
	case len(failing) > 1:
		names := make([]string, len(failing))
		for i, r := range failing {
			names[i] = r.Destination + " (" + string(r.Cause) + ")"
		}
		fmt.Fprintf(&b, "%d of %d destinations of the device fail: %s.", len(failing), len(s.Checked), strings.Join(names, ", "))
	case interrupted > 0:
		fmt.Fprintf(&b, "%d of %d checks were interrupted (scanwarden was stopping); the others pass.", interrupted, len(s.Checked))
	default:
		b.WriteString("The failure named no destination, and " + AllAcceptNow + ".")
	}
	if s.DeviceStatus != "" {
		b.WriteString(" The device itself reports: " + s.DeviceStatus + ".")
	} else {
		b.WriteString(" The device's own status was not in this report.")
	}
	return b.String()
}
