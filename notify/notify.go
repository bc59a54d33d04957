// Package notify tells the admin about incidents: a webhook (JSON POST,
// retried with back-off) and e-mail. The webhook body is a contract
// (issue 11):
//
//	{"event": "incident.opened" | "incident.updated" | "incident.closed",
//	 "incident": {"id", "destination", "device", "cause", "kyocera_code",
//	              "summary", "fix", "opened_at", "closed_at"}}
//
// Other fields may be added, never renamed. A warning (issue 22: what will
// fail days ahead) comes once when raised and once when cleared, however
// many checks see it in between, without "incident":
//
//	{"event": "warning.raised" | "warning.cleared",
//	 "warning": {"kind", "subject", "headline", "summary", "fix", "text", "due",
//	             "kyocera_code", "destinations", "devices", "since"}}
package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/warning"
)

// Event names of the contract.
const (
	EventOpened  = "incident.opened"
	EventUpdated = "incident.updated"
	EventClosed  = "incident.closed"

	EventWarningRaised  = "warning.raised"
	EventWarningCleared = "warning.cleared"
)

// Message is one notification: the webhook body, and what a mail says.
type Message struct {
	Event    string  `json:"event"`
	Incident Payload `json:"incident,omitzero"`
	// Warning is set for the warning events (and Incident left out).
	Warning *warning.Group `json:"warning,omitempty"`
	// Group is set when the incident is a group's — one cause on one
	// server or account, every destination it makes fail; Incident is
	// then the destination whose change opened or closed it.
	Group *GroupPayload `json:"group,omitempty"`
	// Test marks a message sent by the test-send command.
	Test bool `json:"test,omitempty"`
}

// Payload is the incident as notifications show it.
type Payload struct {
	ID          int64      `json:"id"`
	Destination string     `json:"destination"`
	Device      string     `json:"device"`
	Cause       string     `json:"cause"`
	KyoceraCode string     `json:"kyocera_code"`
	Summary     string     `json:"summary"`
	Fix         string     `json:"fix"`
	OpenedAt    time.Time  `json:"opened_at"`
	ClosedAt    *time.Time `json:"closed_at"` // null while open
	Flaps       int        `json:"flaps"`
	Jobs        int        `json:"affected_jobs"`
}

// FromIncident builds the message for a change of inc.
func FromIncident(ch incident.Change, inc incident.Incident) Message {
	p := Payload{ID: inc.ID, Destination: inc.Destination, Device: inc.Device, Cause: string(inc.Cause),
		KyoceraCode: inc.KyoceraCode, Summary: inc.Summary, Fix: inc.Fix, OpenedAt: inc.OpenedAt.UTC(),
		Flaps: inc.Flaps, Jobs: inc.AffectedJobs}
	if !inc.ClosedAt.IsZero() {
		c := inc.ClosedAt.UTC()
		p.ClosedAt = &c
	}
	return Message{Event: ch.Event(), Incident: p}
}

// GroupPayload is an incident group as notifications show it.
type GroupPayload struct {
	ID           int64      `json:"id"`
	Kind         string     `json:"kind"`    // "server" or "account"
	Subject      string     `json:"subject"` // the server, or the account
	Cause        string     `json:"cause"`
	Headline     string     `json:"headline"` // "fs9.office.lan (3 destinations) does not resolve"
	Destinations []string   `json:"destinations"`
	OpenedAt     time.Time  `json:"opened_at"`
	ClosedAt     *time.Time `json:"closed_at"` // null while open
}

// FromGroup builds the message for a group opened or closed by inc's
// change.
func FromGroup(n incident.GroupNotice, inc incident.Incident) Message {
	m := FromIncident(n.Change, inc)
	g := n.Group
	gp := &GroupPayload{ID: g.ID, Kind: string(g.Kind), Subject: g.Subject, Cause: string(g.Cause), Headline: g.Headline(),
		Destinations: append([]string{}, g.Members...), OpenedAt: g.OpenedAt.UTC()}
	if !g.ClosedAt.IsZero() {
		c := g.ClosedAt.UTC()
		gp.ClosedAt = &c
	}
	m.Group = gp
	return m
}

// FromWarning builds the message for a warning group raised or cleared.
func FromWarning(raised bool, g warning.Group) Message {
	ev := EventWarningCleared
	if raised {
		ev = EventWarningRaised
	}
	return Message{Event: ev, Warning: &g}
}

// TestMessage is what the test-send command sends: shaped like a real
// opened incident so the receiving end parses it as it will the real ones.
func TestMessage(now time.Time) Message {
	return Message{Event: EventOpened, Test: true, Incident: Payload{
		Destination: "scanwarden-test", Device: "scanwarden", Cause: "ok",
		Summary: "Test notification from scanwarden: this channel works.",
		Fix:     "Nothing to fix.", OpenedAt: now.UTC()}}
}

// Sender is one channel.
type Sender interface {
	// Channel names it in logs and the timeline ("webhook", "mail").
	Channel() string
	Send(ctx context.Context, m Message) (attempts int, err error)
}

// Outcome is what one channel did with one message.
type Outcome struct {
	Channel  string
	Attempts int
	Err      error
}

// Notifier sends every message on every configured channel.
type Notifier struct {
	senders []Sender
}

// New returns a Notifier over the given channels (none: it sends nothing).
func New(senders ...Sender) *Notifier {
	var ss []Sender
	for _, s := range senders {
		if s != nil {
			ss = append(ss, s)
		}
	}
	return &Notifier{senders: ss}
}

// Channels names the configured channels.
func (n *Notifier) Channels() []string {
	var out []string
	for _, s := range n.senders {
		out = append(out, s.Channel())
	}
	return out
}

// Send sends m on every channel, one after the other; a failing channel
// does not keep the others from sending.
func (n *Notifier) Send(ctx context.Context, m Message) []Outcome {
	var out []Outcome
	for _, s := range n.senders {
		a, err := s.Send(ctx, m)
		out = append(out, Outcome{Channel: s.Channel(), Attempts: a, Err: err})
	}
	return out
}

// Err joins the errors of outcomes, each named by its channel.
func Err(outs []Outcome) error {
	var errs []error
	for _, o := range outs {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Channel, o.Err))
		}
	}
	return errors.Join(errs...)
}

// Subject is the one-line summary used as mail subject.
func Subject(m Message) string {
	if w := m.Warning; w != nil {
		if m.Event == EventWarningCleared {
			return fmt.Sprintf("[scanwarden] warning cleared: %s %s", w.Kind, w.Subject)
		}
		return "[scanwarden] will fail: " + w.Headline
	}
	if g := m.Group; g != nil && (m.Event == EventClosed || len(g.Destinations) > 1) {
		// A group of one reads as that destination's incident, below.
		if m.Event == EventClosed {
			return "[scanwarden] working again: " + g.Headline
		}
		s := fmt.Sprintf("[scanwarden] %s: %s", g.Headline, g.Cause)
		if m.Incident.KyoceraCode != "" {
			s += " (panel " + m.Incident.KyoceraCode + ")"
		}
		return s
	}
	what := map[string]string{EventOpened: "opened", EventUpdated: "changed", EventClosed: "closed"}[m.Event]
	p := m.Incident
	s := fmt.Sprintf("[scanwarden] %s %s", p.Destination, what)
	if m.Event == EventClosed {
		return s + ": working again"
	}
	if p.Cause != "" {
		s += ": " + p.Cause
	}
	if p.KyoceraCode != "" {
		s += " (panel " + p.KyoceraCode + ")"
	}
	if m.Test {
		s = "[scanwarden] test notification"
	}
	return s
}
