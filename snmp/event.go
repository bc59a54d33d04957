package snmp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Source says where an Event was learnt.
type Source string

// Event sources.
const (
	SourceJob     Source = "job"     // Job Monitoring MIB: an aborted send job
	SourceConsole Source = "console" // prtConsoleDisplayBufferText
	SourceAlert   Source = "alert"   // prtAlertTable / kcprtAlertStateTable
	SourceTrap    Source = "trap"    // an SNMP trap or inform
	SourceMail    Source = "mail"    // a job-log / send-result e-mail from the device
)

var knownSources = map[Source]bool{SourceJob: true, SourceConsole: true, SourceAlert: true, SourceTrap: true, SourceMail: true}

// Event is one send failure (or, for traps that match no rule, one raw
// notification) learnt from a device.
type Event struct {
	Device      string            `json:"device"`                // the device's address (host:port), as polled or as matched
	Time        time.Time         `json:"time"`                  // when scanwarden learnt it
	Code        string            `json:"code"`                  // Kyocera code, "" when the device gave none
	Text        string            `json:"text"`                  // the device's words, cleaned (CleanText)
	Destination string            `json:"destination,omitempty"` // the destination, when the device says
	Source      Source            `json:"source"`
	Rule        string            `json:"rule,omitempty"`   // the rule that found the code
	Key         string            `json:"key"`              // de-duplication key
	Detail      map[string]string `json:"detail,omitempty"` // job index, owner, trap OID, raw varbinds, message id …
	// Unverified is set when the sender could not be verified as the device
	// named (a mail from an allowed relay quoting no known device, a trap
	// from an allowed network that is no watched device): kept, never shown
	// as that device's failure.
	Unverified bool `json:"unverified,omitempty"`
}

// Detail keys a polled event carries: the device's own status as the same
// poll read it (hrPrinterStatus; hrPrinterDetectedErrorState's bits, comma
// separated, "" when none).
const (
	DetailPrinterStatus = "printer_status"
	DetailPrinterErrors = "printer_errors"
)

// eventKey builds a de-duplication key from the parts that identify one
// occurrence: for a job its index, for a condition on the panel its code
// and text, for a mail its message id.
func eventKey(device string, src Source, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(device))
	h.Write([]byte{0})
	h.Write([]byte(src))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return string(src) + ":" + hex.EncodeToString(h.Sum(nil)[:12])
}

// reportEvents matches the observations of one report (a poll, a trap, a
// mail) with the rules: a code gives one event per report, from the first
// observation that shows it; an ignored rule gives none.
type reportEvents struct {
	device string
	now    time.Time
	rules  *Rules
	seen   map[string]bool
	out    []Event
}

func newReportEvents(device string, rules *Rules, now time.Time) *reportEvents {
	return &reportEvents{device: device, now: now, rules: rules, seen: map[string]bool{}}
}

// match returns the event o makes (its device, time, code, rule, text,
// source and the destination its text names; the caller adds the key and
// the details, then keeps it with add), or false.
func (r *reportEvents) match(o Observation) (Event, bool) {
	m, ok := r.rules.Match(o)
	if !ok || m.Ignore || r.seen[m.Code] {
		return Event{}, false
	}
	r.seen[m.Code] = true
	return Event{Device: r.device, Time: r.now, Code: m.Code, Text: o.Text, Source: o.Source, Rule: m.Rule,
		Destination: findDestination(o.Text)}, true
}

func (r *reportEvents) add(ev Event) { r.out = append(r.out, ev) }

// uncPattern finds a UNC path or smb:// URL in device text.
func findDestination(text string) string {
	for _, f := range strings.Fields(text) {
		f = strings.Trim(f, `"'()[]<>,;`)
		if len(f) > 2 && strings.HasPrefix(f, `\\`) && f[2] != '\\' {
			return f
		}
		if strings.HasPrefix(strings.ToLower(f), "smb://") && len(f) > 6 {
			return f
		}
	}
	return ""
}
