package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/seal"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
)

// dataFlags are the flags of every command that reads the registry.
type dataFlags struct {
	dataDir, keyFile string
}

func registerDataFlags(fs *flag.FlagSet) *dataFlags {
	f := &dataFlags{}
	fs.StringVar(&f.dataDir, "data-dir", "", "scanwarden's data directory (default $SCANWARDEN_DATA_DIR, else the state dir: $SCANWARDEN_STATE_DIR or ~/.local/state/scanwarden)")
	fs.StringVar(&f.keyFile, "key-file", "", "key that seals the stored passwords (default $"+seal.EnvKeyFile+", else $CREDENTIALS_DIRECTORY/"+seal.FileName+", else "+seal.FileName+" in the data dir; made on first use)")
	return f
}

// resolveDataDir picks the data directory: the flag, SCANWARDEN_DATA_DIR,
// else the state directory of today (resolveStateDir).
func resolveDataDir(flagValue string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if d := getenv("SCANWARDEN_DATA_DIR"); d != "" {
		return d, nil
	}
	return resolveStateDir("", getenv)
}

// installedKeyFile is the sealing key on an installed box (the package
// makes it; systemd hands it to the daemon as a credential).
const installedKeyFile = "/etc/scanwarden/secret.key"

// resolveKeyFile is seal.Resolve, except that for the installed data dir,
// which keeps no key of its own, the installed key file is taken: an admin's
// shell has no $CREDENTIALS_DIRECTORY.
func resolveKeyFile(flagValue string, getenv func(string) string, dataDir string) string {
	return resolveKeyFileFrom(flagValue, getenv, dataDir, installedStateDir, installedKeyFile)
}

func resolveKeyFileFrom(flagValue string, getenv func(string) string, dataDir, installedDir, installedKey string) string {
	p := seal.Resolve(flagValue, getenv, dataDir)
	if p != filepath.Join(dataDir, seal.FileName) || filepath.Clean(dataDir) != installedDir {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if _, err := os.Stat(installedKey); err == nil {
		return installedKey
	}
	return p
}

// open opens the data dir's store and unlocks its secrets.
func (f *dataFlags) open(ctx context.Context, env environ) (*store.Store, error) {
	dir, err := resolveDataDir(f.dataDir, env.getenv)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	if _, err := st.UnlockKey(ctx, resolveKeyFile(f.keyFile, env.getenv, dir)); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// destinationJSON is a destination in every command's JSON: never a
// password.
type destinationJSON struct {
	Name          string      `json:"name"`
	Host          string      `json:"host"`
	Port          int         `json:"port"`
	Share         string      `json:"share"`
	Path          string      `json:"path"`
	User          string      `json:"user"`
	AddressBookID string      `json:"address_book_id"`
	DisplayName   string      `json:"display_name"`
	Device        string      `json:"device,omitempty"`
	Workstation   string      `json:"workstation,omitempty"`
	Source        string      `json:"source,omitempty"`
	Folder        string      `json:"folder,omitempty"`
	LastCheck     *reportJSON `json:"last_check,omitempty"`
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
		AddressBookID: d.AddressBookID, DisplayName: d.DisplayName}
}

// fullDestJSON adds what list and show give beyond the import contract.
func fullDestJSON(d registry.Destination, last *registry.Report) destinationJSON {
	j := destJSON(d)
	j.Device, j.Workstation, j.Source, j.Folder = d.Device, d.Workstation, string(d.Source), d.Folder()
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

// openDestination opens the registry and reads a stored destination as the
// target to replay: its user, password and port, and the workstation name
// of its device (or its own override).
func openDestination(ctx context.Context, env environ, df *dataFlags, name string) (*store.Store, smbcheck.Target, error) {
	st, err := df.open(ctx, env)
	if err != nil {
		return nil, smbcheck.Target{}, err
	}
	d, err := st.Destination(ctx, name)
	if err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return nil, smbcheck.Target{}, fmt.Errorf("no destination %q (scanwarden destination list)", name)
		}
		return nil, smbcheck.Target{}, err
	}
	var dev *registry.Device
	if d.Device != "" {
		v, err := st.Device(ctx, d.Device)
		if err != nil {
			st.Close()
			return nil, smbcheck.Target{}, err
		}
		dev = &v
	}
	return st, d.Target(dev), nil
}

// openedStoreLedger is the ledger of a store already open (the caller
// closes the store).
func openedStoreLedger(st *store.Store) *storeLedger {
	s := &storeLedger{ready: make(chan struct{}), l: st.Ledger()}
	close(s.ready)
	return s
}
