package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/store"
	"github.com/scanwarden/scanwarden/web"
)

var (
	_ web.DeviceManager      = webRegistry{}
	_ web.DestinationManager = webRegistry{}
	_ web.Editor             = webRegistry{}
	_ web.ProfileEditor      = webRegistry{}
)

// webRegistry implements the web's registry writes over the store: what
// `scanwarden device`, `destination` and `check` do, plus a device's
// profile and a destination's auth and bridge. The running parts are told
// of each change.
type webRegistry struct{ m *Main }

// SetDeviceProfile implements web.ProfileEditor: the scheduler re-reads
// the list, and a destination whose device's client changed is checked
// again at once.
func (b webRegistry) SetDeviceProfile(ctx context.Context, device string, set map[registry.ProfileField]string, clear []registry.ProfileField) error {
	if err := b.m.st.Devices().SetDeviceProfile(ctx, device, set, clear); err != nil {
		return notFound(err)
	}
	b.reload()
	return nil
}

// SetAuth implements web.Editor: the destination as stored, with auth; the
// scheduler re-reads the list.
func (b webRegistry) SetAuth(ctx context.Context, name string, auth scanwarden.Auth) error {
	d, err := b.m.st.Destinations().Destination(ctx, name)
	if err != nil {
		return notFound(err)
	}
	d.Auth = auth
	if err := b.m.st.Destinations().PutDestination(ctx, d); err != nil {
		return err
	}
	b.reload()
	return nil
}

// SetBridged implements web.Editor: the destination bridged or not; the
// scheduler re-reads the list and checks it at once as it now is.
func (b webRegistry) SetBridged(ctx context.Context, name string, on bool) (bool, error) {
	changed, err := b.m.st.Destinations().SetBridged(ctx, name, on)
	if err != nil {
		return false, notFound(err)
	}
	if changed {
		b.reload()
	}
	return changed, nil
}

// reload has the scheduler re-read its list.
func (b webRegistry) reload() {
	if mon := b.m.Monitor(); mon != nil {
		mon.Reload()
	}
}

// changed tells the running parts that the registry changed: the
// scheduler re-reads its list, the watch its devices.
func (b webRegistry) changed(ctx context.Context) {
	b.reload()
	if p := b.m.live.get(); p != nil {
		p.watch.Sync(ctx)
	}
}

// PutDevice implements web.DeviceManager as `scanwarden device add` does:
// a change keeps what the form leaves empty, stored credentials stay with
// their address.
func (b webRegistry) PutDevice(ctx context.Context, in web.DeviceInput) error {
	d := registry.Device{Name: in.Name, Address: in.Address, SysName: in.SysName, Workstation: in.Workstation,
		SNMP: registry.SNMP{Version: in.SNMPVersion}}
	creds := false
	if !in.Community.IsZero() {
		d.SNMP.Community, creds = in.Community, true
	}
	if in.V3User != "" && (!in.V3Auth.IsZero() || !in.V3Priv.IsZero()) {
		if creds {
			return scanwarden.BadField("v3_user", nil, "a community and an SNMPv3 user exclude each other")
		}
		if in.V3Auth.IsZero() {
			return scanwarden.BadField("v3_auth", nil, "an SNMPv3 user needs its auth passphrase")
		}
		if in.V3Priv.IsZero() {
			return scanwarden.BadField("v3_priv", nil, "an SNMPv3 user needs its privacy passphrase")
		}
		d.SNMP = registry.SNMP{Version: "3", V3User: in.V3User, V3AuthProto: in.V3AuthProto, V3Auth: in.V3Auth,
			V3PrivProto: in.V3PrivProto, V3Priv: in.V3Priv}
		creds = true
	}
	if err := d.Validate(); err != nil {
		var fe *scanwarden.FieldError
		if errors.As(err, &fe) && fe.Field == "snmp_v3_user" {
			fe.Field = "v3_user"
		}
		return err
	}
	old, err := b.m.st.Devices().Device(ctx, d.Name)
	switch {
	case err == nil && in.New:
		return scanwarden.BadField("name", d.Name, "a device of this name exists: edit it instead")
	case err == nil:
		if !creds && in.V3User != "" && in.V3User != old.SNMP.V3User {
			return scanwarden.BadField("v3_auth", nil, "another SNMPv3 user needs its passphrases")
		}
		if d, err = d.Over(old, creds); err != nil {
			return err
		}
	case errors.Is(err, store.ErrNotFound) && !in.New:
		return notFound(err)
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if d.SNMP.Version == "3" && !creds && d.SNMP.V3Auth.IsZero() {
		return scanwarden.BadField("v3_auth", nil, "SNMPv3 needs a user and its passphrases")
	}
	if err := b.m.st.Devices().PutDevice(ctx, d); err != nil {
		return err
	}
	b.changed(ctx)
	return nil
}

// RemoveDevice implements web.DeviceManager.
func (b webRegistry) RemoveDevice(ctx context.Context, name string, withDestinations bool) error {
	err := b.m.st.Devices().RemoveDevice(ctx, name, withDestinations)
	var inUse *store.DeviceInUseError
	if errors.As(err, &inUse) {
		return scanwarden.BadField("with_destinations", nil, inUse.Error())
	}
	if err != nil {
		return notFound(err)
	}
	b.changed(ctx)
	return nil
}

// destination is the registry destination the form describes: the stored
// one's password when kept, its address-book identity when it was
// imported. Field errors name the form's fields (host, share, path and
// port are the folder's).
func (b webRegistry) destination(ctx context.Context, in web.DestinationInput) (registry.Destination, error) {
	d := registry.Destination{Name: in.Name, User: in.User, Password: in.Password, Device: in.Device,
		Workstation: in.Workstation, Source: registry.SourceAdded}
	if err := registry.ValidName(in.Name); err != nil {
		return d, err
	}
	old, err := b.m.st.Destinations().Destination(ctx, in.Name)
	switch {
	case err == nil && in.New:
		return d, scanwarden.BadField("name", in.Name, "a destination of this name exists: edit it instead")
	case err == nil:
		// An edit keeps where it came from; an imported one stays tied to
		// its address-book entry.
		d.Source, d.AddressBookID, d.DisplayName = old.Source, old.AddressBookID, old.DisplayName
		if in.KeepPassword {
			if old.PasswordUnreadable != "" {
				return d, scanwarden.BadField("password", nil, registry.PasswordUnreadableMark)
			}
			d.Password = old.Password
		}
	case errors.Is(err, store.ErrNotFound) && !in.New:
		return d, notFound(err)
	case !errors.Is(err, store.ErrNotFound):
		return d, err
	}
	if strings.TrimSpace(in.Folder) == "" {
		return d, scanwarden.BadField("folder", nil, `empty: give it as the MFP stores it, \\server\share\folder`)
	}
	t, err := scanwarden.ParseDestination(in.Folder)
	if err != nil {
		return d, scanwarden.BadField("folder", nil, strings.TrimPrefix(err.Error(), fmt.Sprintf("destination %q: ", in.Folder)))
	}
	d.Host, d.Port, d.Share, d.Path = t.Host, t.Port, t.Share, t.Path
	if in.KeepPassword && !sameServer(d, old) {
		// The stored password belongs to the server it was given for:
		// never sent to another one (a stolen session or token could
		// otherwise collect every stored password).
		return d, scanwarden.BadField("password", nil, fmt.Sprintf("the stored password was given for %s and is never sent to another server: enter it again for %s",
			old.Host, d.Host))
	}
	if d.Auth, err = scanwarden.ParseAuth(in.Auth); err != nil {
		return d, scanwarden.BadField("auth", nil, "want ntlm, kerberos or auto")
	}
	if d.Device != "" {
		if _, err := b.m.st.Devices().Device(ctx, d.Device); errors.Is(err, store.ErrNotFound) {
			return d, scanwarden.BadField("device", d.Device, "no such device")
		} else if err != nil {
			return d, err
		}
	}
	if err := d.Validate(); err != nil {
		var fe *scanwarden.FieldError
		if errors.As(err, &fe) {
			switch fe.Field {
			case "host", "share", "path", "port", "destination":
				fe.Field = "folder"
			}
		}
		return d, err
	}
	return d, nil
}

// sameServer says whether two destinations name the same file server
// (the host's case aside, port 0 as 445).
func sameServer(a, b registry.Destination) bool {
	return strings.EqualFold(a.Host, b.Host) && scanwarden.DialPort(a.Port) == scanwarden.DialPort(b.Port)
}

// PutDestination implements web.DestinationManager: stored as `scanwarden
// destination add` stores it (a password entered for an imported one
// whose password was unreadable clears the mark).
func (b webRegistry) PutDestination(ctx context.Context, in web.DestinationInput) error {
	d, err := b.destination(ctx, in)
	if err != nil {
		return err
	}
	if err := b.m.st.Destinations().PutDestination(ctx, d); err != nil {
		return err
	}
	b.changed(ctx)
	return nil
}

// TryDestination implements web.DestinationManager: the check the
// scheduler would run of the destination as the form describes it, with
// the same options (the lockout budget, the directory), stored nowhere.
func (b webRegistry) TryDestination(ctx context.Context, in web.DestinationInput, progress func(smbcheck.Step)) (smbcheck.Report, error) {
	d, err := b.destination(ctx, in)
	if err != nil {
		return smbcheck.Report{}, err
	}
	p := b.m.live.get()
	if p == nil || p.checks == nil {
		return smbcheck.Report{}, errors.New("the checks are not running (see the faults)")
	}
	devs, err := b.m.st.Devices().Devices(ctx)
	if err != nil {
		return smbcheck.Report{}, err
	}
	md := toMonitor(registry.Resolve([]registry.Destination{d}, devs)[0])
	md.AskedAt = time.Now() // an admin's: the server asked afresh
	return p.checks.check.Check(ctx, md, progress), nil
}

// heldStates are the states of a scan held for its destination, not yet
// delivered.
var heldStates = []receiver.State{receiver.Held, receiver.Failed}

func (b webRegistry) heldScans(ctx context.Context, name string) ([]receiver.Scan, error) {
	return b.m.st.Scans().Scans(ctx, receiver.ScanQuery{States: heldStates, Destination: &name})
}

// Held implements web.DestinationManager.
func (b webRegistry) Held(ctx context.Context, name string) (int, error) {
	scans, err := b.heldScans(ctx, name)
	return len(scans), err
}

// RemoveDestination implements web.DestinationManager. Held scans moved to
// another destination become its held scans, due at once; discarded ones
// leave the catalogue and the held area; kept ones stay held under the
// removed name (the forwarder leaves a destination it does not know).
func (b webRegistry) RemoveDestination(ctx context.Context, name string, held web.HeldAction, to string) (int, error) {
	if held == web.HeldMove {
		if to == "" || strings.EqualFold(to, name) {
			return 0, scanwarden.BadField("to", to, "choose another destination")
		}
		if _, err := b.m.st.Destinations().Destination(ctx, to); errors.Is(err, store.ErrNotFound) {
			return 0, scanwarden.BadField("to", to, "no such destination")
		} else if err != nil {
			return 0, err
		}
	}
	if err := b.m.st.Destinations().RemoveDestination(ctx, name); err != nil {
		return 0, notFound(err)
	}
	b.changed(ctx)
	scans, err := b.heldScans(ctx, name)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sc := range scans {
		switch held {
		case web.HeldMove:
			from := sc.State
			sc.Destination, sc.State, sc.Attempts, sc.Error, sc.NextAttempt = to, receiver.Held, 0, "", sc.ReceivedAt
			ok, err := b.m.st.Scans().UpdateScan(ctx, sc, from)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		case web.HeldDiscard:
			ok, err := b.m.st.Scans().DeleteScan(ctx, sc.ID, sc.State)
			if err != nil {
				return n, err
			}
			if ok {
				n++
				b.removeHeldCopy(sc)
			}
		}
	}
	if held == web.HeldMove && n > 0 && b.m.recv != nil {
		b.m.recv.Kick(to)
	}
	return n, nil
}

// removeHeldCopy deletes a discarded scan's file in the held area (a path
// from the catalogue: only below the data dir's receiver/held/).
func (b webRegistry) removeHeldCopy(sc receiver.Scan) {
	rel := filepath.Clean(sc.HeldPath)
	if sc.HeldPath == "" || !filepath.IsLocal(rel) || !strings.HasPrefix(filepath.ToSlash(rel), "held/") {
		return
	}
	live := b.m.live.get()
	if live == nil {
		return
	}
	p := filepath.Join(live.cfg.DataDir, "receiver", rel)
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		b.m.log.Warn("discarded scan: held copy not removed", "id", sc.ID, "err", err)
	}
}
