package receiver

import (
	"context"
	"time"
)

// State is where a scan is in its life.
type State string

const (
	// Held: complete, catalogued, in the held area, waiting for its folder.
	Held State = "held"
	// Incomplete: closed and quiet but its bytes fail the format check (a
	// PDF cut short). Kept in the inbox, shown, never delivered on its own.
	Incomplete State = "incomplete"
	// Delivering: a forwarder has claimed it and is copying it.
	Delivering State = "delivering"
	// Delivered: the copy at the destination was read back and matched.
	Delivered State = "delivered"
	// Failed: the last delivery attempt failed; retried after a back-off.
	Failed State = "failed"
	// Purged: delivered, and the local copy removed after the retention.
	Purged State = "purged"
	// Refused: its bytes are not a format an MFP scans to, or its name's
	// extension does not agree with them (Sniff): kept in the held area,
	// shown, downloadable by the admin as an attachment, never delivered.
	Refused State = "refused"
)

// Unsorted is the share's folder for files that belong to no destination.
const Unsorted = "_unsorted"

// Scan is one catalogued file.
type Scan struct {
	ID          int64     `json:"id"`
	Destination string    `json:"destination"` // registry name; "" for _unsorted
	Folder      string    `json:"-"`           // the share folder it arrived in
	File        string    `json:"file"`        // its name as received, relative to Folder, made safe
	Size        int64     `json:"size"`
	SHA256      string    `json:"sha256"`
	State       State     `json:"state"`
	ReceivedAt  time.Time `json:"received_at"`
	DeliveredAt time.Time `json:"-"`
	Error       string    `json:"error"`

	InboxPath   string    `json:"-"` // where it lies in the inbox (incomplete; or until moved)
	HeldPath    string    `json:"-"` // its copy in the held area, relative to the data dir
	Writer      string    `json:"-"` // user|ip|machine|protocol from smbd's audit log
	RemoteName  string    `json:"-"` // the name it was delivered under
	Attempts    int       `json:"-"`
	NextAttempt time.Time `json:"-"`
	Claim       string    `json:"-"` // the forwarder holding it while Delivering
	Forced      bool      `json:"-"` // an admin let an incomplete scan be delivered
}

// ScanQuery selects scans; zero fields select everything.
type ScanQuery struct {
	States      []State
	Destination *string
	DueBefore   time.Time // NextAttempt at or before (zero: any)
	InboxPath   *string   // rows of this inbox path
	Limit       int
	Newest      bool // newest first (the web's lists); else oldest first
}

// Catalogue keeps the scans; the store implements it. Every method owns its
// transaction.
type Catalogue interface {
	// AddScan inserts s and returns its id.
	AddScan(ctx context.Context, s Scan) (int64, error)
	// UpdateScan writes s over the row s.ID when that row is still in state
	// from; ok is false (and nothing is written) otherwise.
	UpdateScan(ctx context.Context, s Scan, from State) (ok bool, err error)
	// DeleteScan removes the row when it is still in state from.
	DeleteScan(ctx context.Context, id int64, from State) (bool, error)
	Scan(ctx context.Context, id int64) (Scan, error)
	Scans(ctx context.Context, q ScanQuery) ([]Scan, error)
	// ScanStats sums the catalogue up without reading every row.
	ScanStats(ctx context.Context) (ScanStats, error)
}

// ScanStats is the catalogue summed up.
type ScanStats struct {
	Counts     map[State]int
	HeldBytes  int64     // bytes of scans not yet delivered (held, failed, delivering)
	OldestHeld time.Time // zero when none
	LastFailed *Scan     // the most recent failed scan, nil when none
}
