// Package bridge judges a bridged destination's own health. A destination
// whose MFP cannot meet its server's demands while scanwarden's client can
// (smbcheck.ClientCause, smbcheck.RunWithOwn's offer) is bridged: the MFP
// scans to its folder on the fallback share and the forwarder delivers
// with scanwarden's own client, verified. Its health is then the route's:
// the share serving, scanwarden's own check of the real folder, the last
// delivery's outcome and how long the oldest undelivered scan has waited —
// never the MFP-capability cause the bridge exists for.
//
// Judge is a pure function of those inputs and the time.
package bridge

import (
	"fmt"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/receiver/samba"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// StuckAfter is how long a scan may wait undelivered before the bridge
// counts as failing by default ([receiver] bridge_stuck_after): past the forwarder's back-off ceiling (30 min), so
// that a few failed attempts of a delivery the own check finds healthy do
// not raise it, and well within a working day.
const StuckAfter = time.Hour

// ShareStale is the age past which the share's last probe says nothing of
// it now: the running receiver probes every minute (receiver.ProbeEvery),
// every 10 s while it fails.
const ShareStale = 5 * time.Minute

// State is a bridge's health in one word.
type State string

// States.
const (
	StateOK      State = "ok"
	StateFailing State = "failing"
)

// Inputs are what a bridge's health is judged on.
type Inputs struct {
	// Share is the fallback share's last probe (nil: no share runs, or
	// none was probed yet).
	Share *samba.ShareHealth
	// Own is scanwarden's own check of the real folder (nil: none yet),
	// made at OwnAt.
	Own   *smbcheck.Verdict
	OwnAt time.Time
	// Backlog is the destination's deliveries summed up.
	Backlog receiver.Backlog
	// StuckAfter: a scan waiting longer fails the bridge (0: StuckAfter).
	StuckAfter time.Duration
}

// Health is a bridged destination's own health, as every output shows it.
type Health struct {
	State State `json:"state"`
	// Why lists what fails, in words ("" when ok).
	Why string `json:"why,omitempty"`
	// ShareServing: the fallback share takes the MFP's scans; ShareDetail
	// says what its last probe found.
	ShareServing bool   `json:"share_serving"`
	ShareDetail  string `json:"share_detail"`
	// OwnCheck is the cause scanwarden's own client last found on the real
	// folder ("" : not checked yet), at OwnCheckAt.
	OwnCheck   scanwarden.Cause `json:"own_check,omitempty"`
	OwnCheckAt *time.Time       `json:"own_check_at,omitempty"`
	// LastDelivery is the last delivery's outcome: "delivered", "failed"
	// or "" (none yet); LastDeliveryAt when it was delivered,
	// LastDeliveryError why it failed.
	LastDelivery      string     `json:"last_delivery,omitempty"`
	LastDeliveryAt    *time.Time `json:"last_delivery_at,omitempty"`
	LastDeliveryFile  string     `json:"last_delivery_file,omitempty"`
	LastDeliveryError string     `json:"last_delivery_error,omitempty"`
	// Waiting counts the scans not yet delivered; OldestWaiting is when
	// the oldest was received and OldestAge its age in whole seconds.
	Waiting       int        `json:"waiting"`
	OldestWaiting *time.Time `json:"oldest_waiting,omitempty"`
	OldestAge     int64      `json:"oldest_age_seconds"`
}

// OK reports whether the bridge works.
func (h Health) OK() bool { return h.State == StateOK }

// Judge is the bridge's health from in at now: failing when the share does
// not serve, scanwarden's own check of the real folder fails, or a scan
// has waited longer than StuckAfter. A delivery that failed and is being
// retried is shown, and fails the bridge only once its scan waits too
// long (or the own check fails with it).
func Judge(in Inputs, now time.Time) Health {
	stuck := in.StuckAfter
	if stuck <= 0 {
		stuck = StuckAfter
	}
	var h Health
	var why []string
	switch {
	case in.Share == nil:
		h.ShareDetail = "no fallback share runs (or it has not been probed yet)"
		why = append(why, "the fallback share is not running: the MFP's scans have nowhere to go")
	case !in.Share.At.IsZero() && now.Sub(in.Share.At) > ShareStale:
		h.ShareDetail = in.Share.Detail
		why = append(why, fmt.Sprintf("the fallback share was last probed %s ago: no receiver runs", now.Sub(in.Share.At).Round(time.Second)))
	case in.Share.OK():
		h.ShareServing, h.ShareDetail = true, in.Share.Detail
	default:
		h.ShareDetail = in.Share.Detail
		why = append(why, "the fallback share refuses the MFP: "+in.Share.Detail)
	}
	if in.Own != nil {
		h.OwnCheck = in.Own.Cause
		if !in.OwnAt.IsZero() {
			at := in.OwnAt
			h.OwnCheckAt = &at
		}
		if in.Own.Cause != scanwarden.CauseOK {
			why = append(why, fmt.Sprintf("scanwarden's own check of the real folder fails (%s): %s", in.Own.Cause, in.Own.Summary))
		}
	}
	b := in.Backlog
	if !b.LastDelivered.IsZero() {
		at := b.LastDelivered
		h.LastDelivery, h.LastDeliveryAt, h.LastDeliveryFile = "delivered", &at, b.LastFile
	}
	if b.LastFailed != nil {
		h.LastDelivery, h.LastDeliveryError = "failed", b.LastFailed.Error
	}
	h.Waiting = b.Waiting
	if !b.Oldest.IsZero() {
		at := b.Oldest
		h.OldestWaiting = &at
		age := max(now.Sub(b.Oldest), 0)
		h.OldestAge = int64(age / time.Second)
		if age > stuck {
			w := fmt.Sprintf("a scan has waited %s undelivered (more than %s)", age.Round(time.Minute), stuck)
			if h.LastDeliveryError != "" {
				w += "; the last attempt: " + h.LastDeliveryError
			}
			why = append(why, w)
		}
	}
	h.State = StateOK
	if len(why) > 0 {
		h.State, h.Why = StateFailing, strings.Join(why, "; ")
	}
	return h
}

// Verdict is the check's verdict for a bridged destination whose own check
// passed but whose bridge fails (h failing): bridge-failing, with why.
func (h Health) Verdict() smbcheck.Verdict {
	info := scanwarden.CauseBridgeFailing.Info()
	return smbcheck.Verdict{Cause: scanwarden.CauseBridgeFailing, KyoceraCode: info.KyoceraCode,
		Summary: "The bridge does not deliver this destination's scans: " + h.Why + ".", Fix: info.Fix}
}

// Line is the health in one line, as `status`, the list and the page show
// it.
func (h Health) Line(now time.Time) string {
	var b strings.Builder
	if h.OK() {
		b.WriteString("bridged, ok")
	} else {
		b.WriteString("bridged, FAILING: " + h.Why)
	}
	if h.ShareServing {
		b.WriteString("; share serving")
	}
	if h.OwnCheck != "" {
		b.WriteString("; own check " + string(h.OwnCheck))
	}
	switch h.LastDelivery {
	case "delivered":
		fmt.Fprintf(&b, "; last delivery %s ago", now.Sub(*h.LastDeliveryAt).Round(time.Second))
	case "failed":
		b.WriteString("; last delivery failed")
	default:
		b.WriteString("; nothing delivered yet")
	}
	if h.Waiting > 0 {
		fmt.Fprintf(&b, "; %d waiting, oldest %s", h.Waiting, (time.Duration(h.OldestAge) * time.Second).String())
	} else {
		b.WriteString("; none waiting")
	}
	return b.String()
}
