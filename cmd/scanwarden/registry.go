package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/bridge"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/store"
)

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
	// BridgedAt: when it was bridged (absent: it is not); Bridge its
	// bridge's own health.
	BridgedAt *time.Time     `json:"bridged_at,omitempty"`
	Bridge    *bridge.Health `json:"bridge,omitempty"`
}

type reportJSON struct {
	At          time.Time `json:"at"`
	Cause       string    `json:"cause"`
	KyoceraCode string    `json:"kyocera_code"`
	Summary     string    `json:"summary"`
}

func destJSON(d registry.Destination) destinationJSON {
	return destinationJSON{Name: d.Name, Host: d.Host, Port: scanwarden.DialPort(d.Port), Share: d.Share, Path: d.Path, User: d.User,
		AddressBookID: d.AddressBookID, DisplayName: d.DisplayName, PasswordUnreadable: d.PasswordUnreadable}
}

// fullDestJSON adds what list and show give beyond the import contract.
func fullDestJSON(d registry.Destination, last *registry.Report) destinationJSON {
	j := destJSON(d)
	j.Device, j.Workstation, j.Source, j.Folder = d.Device, d.Workstation, string(d.Source), d.Folder()
	j.Auth = string(scanwarden.AuthNTLM)
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
// resolved as the target to replay (store.Destinations.Target): its user, password and
// port, and the workstation name of its device (or its own override).
func openDestination(ctx context.Context, env environ, df *dataFlags, name string) (*store.Store, registry.Resolved, error) {
	st, err := df.open(ctx, env, true)
	if err != nil {
		return nil, registry.Resolved{}, err
	}
	r, err := st.Destinations().Target(ctx, name)
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
