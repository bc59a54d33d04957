package receiver

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/scanwarden/scanwarden"
)

// Destination is a registered scan destination as the receiver needs it.
type Destination struct {
	Name   string            // unique registry name
	Folder string            // its folder on the fallback share (stable, safe)
	Target scanwarden.Target // the real folder, as the MFP stores it
}

// Destinations lists the registered destinations (the registry).
type Destinations interface {
	Destinations(ctx context.Context) ([]Destination, error)
}

// Remote opens a destination's real folder: smbclient's dialer, with the
// failure ledger's gate, in the daemon.
type Remote interface {
	Open(ctx context.Context, t scanwarden.Target) (Folder, error)
}

// ErrLogon marks a Remote's error as a failed or refused logon: such a
// delivery is not retried on the back-off timer (each try could count
// toward the account's lockout); the next green check or an on-demand
// delivery tries again.
var ErrLogon = errors.New("logon failed")

// Folder is a logged-on destination folder; names are relative to it.
type Folder interface {
	// Create makes a new file, failing with os.ErrExist when it exists.
	Create(ctx context.Context, name string) (RemoteFile, error)
	Open(ctx context.Context, name string) (RemoteFile, error)
	// Rename fails with os.ErrExist when to exists.
	Rename(ctx context.Context, from, to string) error
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	Remove(ctx context.Context, name string) error
	// Close logs off.
	Close() error
}

// RemoteFile is an open file of a Folder.
type RemoteFile interface {
	io.Reader
	io.Writer
	io.Closer
	Sync() error
}
