package receiver

import (
	"fmt"
	"time"
)

// ScanView is a scan as the admin's pages and API show it: no path inside
// the box, no claim. Name is the file name the MFP chose: data, escaped
// where it is shown, never used as a path.
type ScanView struct {
	ID          int64     `json:"id"`
	Destination string    `json:"destination"`
	Name        string    `json:"name"`
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256,omitempty"`
	State       string    `json:"state"`
	ReceivedAt  time.Time `json:"received_at"`
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	Attempts    int       `json:"attempts"`
	Error       string    `json:"error,omitempty"`
}

// View is the scan as the admin sees it.
func (s Scan) View() ScanView {
	return ScanView{ID: s.ID, Destination: s.Destination, Name: s.File, Size: s.Size, SHA256: s.SHA256, State: string(s.State),
		ReceivedAt: s.ReceivedAt, DeliveredAt: s.DeliveredAt, Attempts: s.Attempts, Error: s.Error}
}

// StatusView is the fallback share at a glance.
type StatusView struct {
	Enabled bool           `json:"enabled"`
	Counts  map[string]int `json:"counts"` // scans per state
	// Allow are the networks that may connect to the share (empty: any).
	Allow []string `json:"allow"`
	// Warnings are standing ones (SMB1/NTLMv1 enabled for old firmware, a
	// share open to more than the MFPs).
	Warnings []string `json:"warnings,omitempty"`
	Fault    string   `json:"fault,omitempty"`
}

// View is the running share at a glance; its fault is the first known of
// smbd down, the share probe's failure and the last failed delivery.
func (st Status) View() StatusView {
	out := StatusView{Enabled: true, Counts: map[string]int{}, Allow: st.Allow, Warnings: st.Warnings}
	for k, v := range st.Counts {
		out.Counts[string(k)] = v
	}
	switch {
	case !st.SmbdUp:
		out.Fault = "smbd is not running"
	case st.Fault != "":
		out.Fault = st.Fault
	case st.LastError != nil:
		out.Fault = fmt.Sprintf("last delivery failed (scan %d): %s", st.LastError.Scan, st.LastError.Error)
	}
	return out
}
