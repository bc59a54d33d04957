package web

import (
	"context"
	"errors"
	"io"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// The interfaces the web server calls. The daemon implements them over the
// registry, the monitor, the receiver and the store; tests use fakes. Each is
// small and may be nil in Config: the pages of a missing part say so (503 for
// the API) instead of failing.
//
// Every string in these types that a device, a file server or an address
// book provided is data: the templates escape it, nothing uses it as a path.

// ErrNotFound is returned (wrapped or not) by a backend for an unknown name
// or id; the server answers 404.
var ErrNotFound = errors.New("not found")

// Fleet reads the devices and destinations.
type Fleet interface {
	Devices(ctx context.Context) ([]registry.DeviceView, error)
	// Device returns one device by name with its destinations.
	Device(ctx context.Context, name string) (registry.DeviceView, error)
	// Destinations returns every destination with its last verdict.
	Destinations(ctx context.Context) ([]registry.DestinationView, error)
	// Destination returns one destination by name with its last report.
	Destination(ctx context.Context, name string) (registry.DestinationView, error)
	// History returns the destination's stored reports, newest first.
	History(ctx context.Context, name string, limit int) ([]registry.ReportView, error)
}

// Checker runs a check of a stored destination now. progress is called
// with each step as it completes (from the checking goroutine), before Check
// returns the whole report. The report is stored by the checker as any
// scheduled check's is. An error means the check could not run (unknown
// destination: ErrNotFound).
type Checker interface {
	Check(ctx context.Context, destination string, progress func(smbcheck.Step)) (smbcheck.Report, error)
}

// Incidents reads incidents and their timelines.
type Incidents interface {
	// Incidents lists incidents, newest first; state "open", "closed" or ""
	// (all). Timelines may be left empty in a list.
	Incidents(ctx context.Context, state string, limit int) ([]incident.View, error)
	// Incident returns one incident with its whole timeline.
	Incident(ctx context.Context, id int64) (incident.View, error)
}

// Events reads the devices' send failures, newest first.
type Events interface {
	Events(ctx context.Context, q EventQuery) ([]incident.EventView, error)
}

// Which events by their sender: both (the unverified ones marked), only the
// ones a watched device sent, or only the unverified ones.
type Which int

// Event selections.
const (
	EventsAll Which = iota
	EventsVerified
	EventsUnverified
)

// EventQuery selects events.
type EventQuery struct {
	Device string // "" every device
	Which  Which
	Limit  int
}

// Receiver is the fallback share's catalogue and forwarder.
type Receiver interface {
	Status(ctx context.Context) (receiver.StatusView, error)
	// Scans lists scans in one state ("" for all), newest first.
	Scans(ctx context.Context, state string, limit int) ([]receiver.ScanView, error)
	Scan(ctx context.Context, id int64) (receiver.ScanView, error)
	// Open reads a held scan's bytes (from the inbox; ErrNotFound when it
	// has none).
	Open(ctx context.Context, id int64) (io.ReadCloser, error)
	// Deliver asks the forwarder to deliver a held scan now.
	Deliver(ctx context.Context, id int64) error
	// Force delivers an incomplete scan as it is.
	Force(ctx context.Context, id int64) error
}

// Importer reads a device's address-book export. With dryRun nothing is
// stored: the result is the preview.
type Importer interface {
	Import(ctx context.Context, device string, export []byte, dryRun bool) (registry.ImportView, error)
}

// Settings are the settings an admin changes in the page, stored; the
// configuration file wins at start where both set a key (config.SettingField.FromFile).
type Settings interface {
	Settings(ctx context.Context) ([]config.SettingsSection, error)
	// Set stores a section's values. A value for a secret field that is ""
	// leaves the stored secret as it is. A bad value is a *FieldError.
	Set(ctx context.Context, section string, values map[string]string) error
	// SendTest sends a test through a section's channel (notifications:
	// "webhook", "mail") and says what happened.
	SendTest(ctx context.Context, channel string) (string, error)
}

// DeviceManager adds, changes and removes devices: what `scanwarden device`
// does. A value that cannot be stored is a *scanwarden.FieldError whose
// Field is the form's field name (DeviceInput's form keys).
type DeviceManager interface {
	PutDevice(ctx context.Context, d DeviceInput) error
	// RemoveDevice refuses a device that still has destinations unless
	// withDestinations (a *scanwarden.FieldError on "with_destinations").
	RemoveDevice(ctx context.Context, name string, withDestinations bool) error
}

// DestinationManager adds, changes, tries and removes destinations: what
// `scanwarden destination` and `scanwarden check` do. A value that cannot
// be stored is a *scanwarden.FieldError whose Field is the form's field
// name (DestinationInput's form keys).
type DestinationManager interface {
	PutDestination(ctx context.Context, d DestinationInput) error
	// TryDestination checks d as it would be stored (its device's
	// workstation, the stored password when KeepPassword), streaming each
	// step to progress; nothing is stored. The error means the check could
	// not run (a bad field: *scanwarden.FieldError).
	TryDestination(ctx context.Context, d DestinationInput, progress func(smbcheck.Step)) (smbcheck.Report, error)
	// Held counts the destination's scans the fallback share holds for it
	// (held or failed: not yet delivered).
	Held(ctx context.Context, name string) (int, error)
	// RemoveDestination removes it; its held scans are delivered to
	// another destination (HeldMove, to), kept held under its name
	// (HeldKeep: a destination added again by that name gets them) or
	// discarded (HeldDiscard). It says how many scans were moved or
	// discarded.
	RemoveDestination(ctx context.Context, name string, held HeldAction, to string) (int, error)
}

// HeldAction is what becomes of a removed destination's held scans.
type HeldAction string

// What to do with held scans.
const (
	HeldKeep    HeldAction = "keep"
	HeldMove    HeldAction = "move"
	HeldDiscard HeldAction = "discard"
)

// DeviceInput is a device as its form gives it. A zero secret keeps the
// stored one — except that stored SNMP credentials stay with the address
// they were given for: a new address needs them again.
type DeviceInput struct {
	Name string
	// New: add (a name in use is refused); else the device must exist.
	New         bool
	Address     string // HOST[:PORT] it answers SNMP on
	SNMPVersion string // "", 1, 2c, 3
	Community   scanwarden.Secret
	V3User      string
	V3AuthProto string
	V3Auth      scanwarden.Secret
	V3PrivProto string
	V3Priv      scanwarden.Secret
	SysName     string
	Workstation string
}

// DestinationInput is a destination as its form gives it.
type DestinationInput struct {
	Name string
	// New: add (a name in use is refused); else it must exist.
	New bool
	// Folder is the folder as the MFP stores it: \\HOST\SHARE\PATH or
	// //HOST[:PORT]/SHARE/PATH.
	Folder   string
	User     string
	Password scanwarden.Secret
	// KeepPassword keeps the stored password (an edit whose password
	// field was left empty).
	KeepPassword bool
	Device       string
	Workstation  string
	Auth         string // ntlm, kerberos, auto
}

// Status tells the daemon's own faults (a listener that could not bind, the
// DC down, a full disk).
type Status interface {
	Faults(ctx context.Context) ([]scanwarden.Fault, error)
}

// AuthStore keeps the admin password hash, the sessions, the API tokens and
// the audit log. The store implements it.
type AuthStore interface {
	// AdminPassword returns the admin's password hash, "" when none is set.
	AdminPassword(ctx context.Context) (string, error)
	SetAdminPassword(ctx context.Context, hash string) error

	CreateSession(ctx context.Context, s scanwarden.Session) error
	// Session returns the session with the hash (ErrNotFound-like error
	// when there is none; any error refuses the request).
	Session(ctx context.Context, idHash string) (scanwarden.Session, bool, error)
	TouchSession(ctx context.Context, idHash string, at time.Time) error
	DeleteSession(ctx context.Context, idHash string) error
	// DeleteSessions ends every session (a password change).
	DeleteSessions(ctx context.Context) error

	CreateToken(ctx context.Context, t scanwarden.APIToken) error
	// TokenByHash finds a token; ok false when there is none.
	TokenByHash(ctx context.Context, hash string) (scanwarden.APIToken, bool, error)
	TouchToken(ctx context.Context, name string, at time.Time) error
	Tokens(ctx context.Context) ([]scanwarden.APIToken, error)
	DeleteToken(ctx context.Context, name string) error
	// DeleteTokens revokes every token (a password change) and says how many.
	DeleteTokens(ctx context.Context) (int, error)

	AddAudit(ctx context.Context, e scanwarden.AuditEntry) error
	Audit(ctx context.Context, limit int) ([]scanwarden.AuditEntry, error)
}

// FieldError says which setting of a settings section is wrong and why:
// the one field error (scanwarden.FieldError) with its section. Its
// message never shows the value (a setting may be a secret).
type FieldError struct {
	Section string
	scanwarden.FieldError
}

// BadSetting is the *FieldError for section.field.
func BadSetting(section, field string, value any, reason string) *FieldError {
	return &FieldError{Section: section, FieldError: scanwarden.FieldError{Field: field, Value: value, Reason: reason}}
}

func (e *FieldError) Error() string {
	return e.Section + "." + e.Field + ": " + e.Reason
}
