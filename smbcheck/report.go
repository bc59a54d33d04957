package smbcheck

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/serverlog"
	"github.com/scanwarden/scanwarden/smbclient"
	"github.com/scanwarden/scanwarden/smbconn"
)

// Status of one step.
type Status string

// Step statuses.
const (
	StatusOK      Status = "ok"
	StatusWarn    Status = "warn"
	StatusFail    Status = "fail"
	StatusSkipped Status = "skipped"
)

// Step ids: stable, part of the JSON contract.
const (
	StepName      = "name"
	StepTCP       = "tcp"
	StepNegotiate = "negotiate"
	StepAD        = "ad"
	StepSession   = "session"
	StepForms     = "forms"
	StepTree      = "tree"
	StepPath      = "path"
	StepACL       = "acl"
	StepWrite     = "write"
)

// Evidence is the raw material a step saw: NT status, errno, addresses,
// dialects. Values are strings, numbers, booleans or lists of those.
type Evidence map[string]any

// Step is one layer of the check.
type Step struct {
	ID       string           `json:"id"`
	Status   Status           `json:"status"`
	Detail   string           `json:"detail"`
	Cause    scanwarden.Cause `json:"cause,omitempty"`
	Evidence Evidence         `json:"evidence"`
	Duration time.Duration    `json:"-"`
}

// MarshalJSON adds the duration as whole milliseconds ("ms").
func (s Step) MarshalJSON() ([]byte, error) {
	type plain Step
	ev := s.Evidence
	if ev == nil {
		ev = Evidence{}
	}
	p := plain(s)
	p.Evidence = ev
	return json.Marshal(struct {
		plain
		MS int64 `json:"ms"`
	}{p, s.Duration.Milliseconds()})
}

// UnmarshalJSON reads what MarshalJSON writes, the duration included: a
// stored report keeps its steps' timings (a TCP step that gave up after
// 6 s is not read back as 0 ms).
func (s *Step) UnmarshalJSON(b []byte) error {
	type plain Step
	var v struct {
		plain
		MS int64 `json:"ms"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Step(v.plain)
	s.Duration = time.Duration(v.MS) * time.Millisecond
	return nil
}

// Verdict is the one cause the check names, with what to do about it.
type Verdict struct {
	Cause       scanwarden.Cause `json:"cause"`
	KyoceraCode string           `json:"kyocera_code"`
	Summary     string           `json:"summary"`
	Fix         string           `json:"fix"`
	// Also lists further causes found behind the first (e.g. the share is
	// missing too once the user name is fixed).
	Also []scanwarden.Cause `json:"also,omitempty"`
	// FromLedger is set when the cause was not replayed now but taken from
	// an earlier observation because the failure budget is spent.
	FromLedger bool `json:"from_ledger,omitempty"`
}

// Report is the result of one check. It is data: a check that ran always
// yields a Report, whatever it found.
type Report struct {
	Target      scanwarden.TargetInfo `json:"target"`
	Started     time.Time             `json:"started"`
	Steps       []Step                `json:"steps"`
	Verdict     Verdict               `json:"verdict"`
	WorkingForm *smbclient.Form       `json:"working_form,omitempty"`
	Server      *smbconn.ServerInfo   `json:"server,omitempty"`
	// Interrupted is set when the check was stopped before it ended: the
	// verdict covers only the steps that ran.
	Interrupted bool `json:"interrupted,omitempty"`
	// Canary is the name of a test file the check could not remove.
	Canary string `json:"leftover_canary,omitempty"`
	// ServerLog is the file server's own story (its event log, its share's
	// connections), read with a separate account after the check
	// (package evidence): evidence beside the verdict, never the verdict.
	ServerLog *serverlog.Story `json:"server_log,omitempty"`
	// Bridge is what the report says about the bridge (RunWithOwn): the
	// offer, or that the check was a bridged destination's own.
	Bridge *Bridge `json:"bridge,omitempty"`
	// Profile is the SMB client the check replayed: the device's profile,
	// or scanwarden's own (nil: not recorded — a report from before it
	// was, or one that replayed nothing).
	Profile *Profile `json:"profile,omitempty"`
}

// Profile is, for a report, the client a check replayed: scanwarden's own
// (no device profile), or a device's profile — whose, what the replay did,
// and each value with where it came from (seen on the fallback share, set
// by the admin, the family's default).
type Profile struct {
	// Own: scanwarden's own client (no device, or nothing known of it).
	Own     bool            `json:"own_client,omitempty"`
	Device  string          `json:"device,omitempty"`
	Summary string          `json:"summary,omitempty"` // Device.Describe of what was replayed
	Values  []ProfileSource `json:"values,omitempty"`
}

// ProfileSource is one value of a replayed profile and its origin.
type ProfileSource struct {
	Field  string     `json:"field"`
	Value  string     `json:"value"` // "" when not known
	Origin string     `json:"origin"`
	SeenAt *time.Time `json:"seen_at,omitempty"`
}

// Replayed words whose client the check replayed, for a person ("": not
// recorded).
func (r Report) Replayed() string {
	p := r.Profile
	switch {
	case p == nil:
		return ""
	case p.Own && p.Device != "":
		return fmt.Sprintf("scanwarden's own client (device %s: no profile known)", p.Device)
	case p.Own:
		return "scanwarden's own client (no device profile)"
	case p.Device != "":
		return fmt.Sprintf("device %s's profile: %s", p.Device, p.Summary)
	}
	return "a device profile: " + p.Summary
}

// Bridge is what a report says about the bridge: the offer, where the
// device's client failed on a cause of its own and scanwarden's own client
// passed; or, for a bridged destination, that the check was the bridge's
// own (scanwarden's client, as the forwarder logs on).
type Bridge struct {
	// Offered: the device's client failed on DeviceCause (ClientCause) and
	// scanwarden's own client passed — the bridge would deliver.
	Offered bool `json:"offered,omitempty"`
	// DeviceCause is what the device's client met (offer or not).
	DeviceCause scanwarden.Cause `json:"device_cause,omitempty"`
	// Own is scanwarden's own client's verdict on the real folder.
	Own *Verdict `json:"own,omitempty"`
	// Active: the destination is bridged; this check replayed scanwarden's
	// own client, the one its deliveries use, not the device's.
	Active bool `json:"active,omitempty"`
	// Message says it in words, with the way to bridge (Offered) or what
	// the bridge's check found (Active).
	Message string `json:"message,omitempty"`
	// Command bridges the destination from the command line (Offered).
	Command string `json:"command,omitempty"`
}

// Step returns the step with id, or nil.
func (r *Report) Step(id string) *Step {
	for i := range r.Steps {
		if r.Steps[i].ID == id {
			return &r.Steps[i]
		}
	}
	return nil
}

// OK reports whether the verdict is ok.
func (r *Report) OK() bool { return r.Verdict.Cause == scanwarden.CauseOK }

// FormatEvidence renders evidence as sorted key=value pairs for humans.
func FormatEvidence(ev Evidence) string {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" ")
		}
		v := ev[k]
		switch x := v.(type) {
		case []string:
			fmt.Fprintf(&b, "%s=%s", k, strings.Join(x, ","))
		default:
			fmt.Fprintf(&b, "%s=%v", k, x)
		}
	}
	return b.String()
}
