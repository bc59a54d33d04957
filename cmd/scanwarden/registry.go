package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// dataFlags are the flags of every command that opens the data dir.
type dataFlags struct {
	dataDir, keyFile string
}

// dataDirUsage is --data-dir's help: store.DataDir's rule.
const dataDirUsage = "scanwarden's data directory (default $" + store.EnvDataDir + ", else " + store.InstalledDir +
	" when this user may use it, else ./" + store.LocalDir + " when it exists, else the user's state dir)"

func registerDataFlags(fs *flag.FlagSet) *dataFlags {
	f := &dataFlags{}
	fs.StringVar(&f.dataDir, "data-dir", "", dataDirUsage)
	fs.StringVar(&f.keyFile, "key-file", "", "key that seals the stored passwords (default $"+seal.EnvKeyFile+", else $CREDENTIALS_DIRECTORY/"+seal.FileName+", else "+seal.FileName+" in the data dir; made on first use)")
	return f
}

// stateDirAlias registers --state-dir, the older name of --data-dir.
func (f *dataFlags) stateDirAlias(fs *flag.FlagSet) {
	fs.StringVar(&f.dataDir, "state-dir", "", "the same as --data-dir")
}

// dir is the data dir by store.DataDir's rule.
func (f *dataFlags) dir(env environ) (string, error) {
	return store.DataDir(f.dataDir, env.getenv, store.UserStateDir)
}

// keyPath is the data dir's sealing key.
func (f *dataFlags) keyPath(env environ, dir string) string {
	return store.KeyFile(f.keyFile, env.getenv, dir)
}

// open opens the data dir's store and unlocks its secrets.
func (f *dataFlags) open(ctx context.Context, env environ) (*store.Store, error) {
	dir, err := f.dir(env)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	if _, err := st.UnlockKey(ctx, f.keyPath(env, dir)); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// destinationJSON is a destination in every command's JSON: never a
// password.
type destinationJSON struct {
	Name          string `json:"name"`
	Host          string `json:"host"`
	Port          int    `json:"port"`
	Share         string `json:"share"`
	Path          string `json:"path"`
	User          string `json:"user"`
	AddressBookID string `json:"address_book_id"`
	DisplayName   string `json:"display_name"`
	Device        string `json:"device,omitempty"`
	Workstation   string `json:"workstation,omitempty"`
	Auth          string `json:"auth,omitempty"`
	Source        string `json:"source,omitempty"`
	Folder        string `json:"folder,omitempty"`
	// PasswordUnreadable: why the imported password could not be read.
	PasswordUnreadable string      `json:"password_unreadable,omitempty"`
	LastCheck          *reportJSON `json:"last_check,omitempty"`
}

type reportJSON struct {
	At          time.Time `json:"at"`
	Cause       string    `json:"cause"`
	KyoceraCode string    `json:"kyocera_code"`
	Summary     string    `json:"summary"`
}

func destJSON(d registry.Destination) destinationJSON {
	port := d.Port
	if port == 0 {
		port = 445
	}
	return destinationJSON{Name: d.Name, Host: d.Host, Port: port, Share: d.Share, Path: d.Path, User: d.User,
		AddressBookID: d.AddressBookID, DisplayName: d.DisplayName, PasswordUnreadable: d.PasswordUnreadable}
}

// fullDestJSON adds what list and show give beyond the import contract.
func fullDestJSON(d registry.Destination, last *registry.Report) destinationJSON {
	j := destJSON(d)
	j.Device, j.Workstation, j.Source, j.Folder = d.Device, d.Workstation, string(d.Source), d.Folder()
	j.Auth = string(smbcheck.AuthNTLM)
	if d.Auth != "" {
		j.Auth = string(d.Auth)
	}
	if last != nil {
		j.LastCheck = &reportJSON{At: last.At.UTC(), Cause: string(last.Cause), KyoceraCode: last.KyoceraCode, Summary: last.Summary}
	}
	return j
}

// userLabel shows a login name, the empty one included.
func userLabel(u string) string {
	if u == "" {
		return "(no login name: guest)"
	}
	return "'" + terminalSafe(u) + "'"
}

// openDestination opens the registry and reads a stored destination
// resolved as the target to replay (store.Target): its user, password and
// port, and the workstation name of its device (or its own override).
func openDestination(ctx context.Context, env environ, df *dataFlags, name string) (*store.Store, registry.Resolved, error) {
	st, err := df.open(ctx, env)
	if err != nil {
		return nil, registry.Resolved{}, err
	}
	r, err := st.Target(ctx, name)
	if err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return nil, r, fmt.Errorf("no destination %q (scanwarden destination list)", name)
		}
		return nil, r, err
	}
	return st, r, nil
}

// openedStoreLedger is the ledger of a store already open (the caller
// closes the store).
func openedStoreLedger(st *store.Store) *storeLedger {
	s := &storeLedger{ready: make(chan struct{}), l: st.Ledger()}
	close(s.ready)
	return s
}
