package daemon

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
	"github.com/scanwarden/scanwarden/web"
)

// webImporter imports a device's address-book export from the page, as
// `scanwarden import addressbook` does (the device is added when new).
type webImporter struct{ m *Main }

var _ web.Importer = webImporter{}

func (i webImporter) Import(ctx context.Context, device string, export []byte, dryRun bool) (web.ImportResult, error) {
	if err := registry.ValidName(device); err != nil {
		return web.ImportResult{}, fmt.Errorf("device name: %w", err)
	}
	book, err := registry.ReadAddressBook(bytes.NewReader(export))
	if err != nil {
		return web.ImportResult{}, err
	}
	res, err := i.m.st.ImportAddressBook(ctx, device, book, dryRun)
	if err != nil {
		return web.ImportResult{}, err
	}
	out := web.ImportResult{Device: res.Device, DryRun: res.DryRun, Skipped: res.Skipped}
	for n, d := range res.Put {
		action := "update"
		if res.New[n] {
			action = "add"
		}
		reason := "contact " + d.AddressBookID
		if d.PasswordUnreadable != "" {
			reason += "; " + registry.PasswordUnreadableMark + " (" + d.PasswordUnreadable + "): imported without a password"
		}
		out.Entries = append(out.Entries, web.ImportRow{Name: d.Name, DisplayName: d.DisplayName, Target: folderText(d), User: d.User,
			Action: action, Reason: reason})
	}
	for _, d := range res.Removed {
		out.Entries = append(out.Entries, web.ImportRow{Name: d.Name, DisplayName: d.DisplayName, Target: folderText(d), User: d.User,
			Action: "remove", Reason: "contact " + d.AddressBookID + " is no longer in the address book"})
	}
	if res.DeviceCreated {
		out.Notes = append(out.Notes, "The device "+device+" is new and is added.")
	}
	if res.Skipped > 0 {
		out.Notes = append(out.Notes, strconv.Itoa(res.Skipped)+" contacts without an SMB destination are skipped.")
	}
	if !dryRun {
		i.m.SyncDevices(ctx)
	}
	return out, nil
}

// folderText is a destination's folder as the admin types it on the panel:
// \\HOST\SHARE\PATH, and the port beside it when not 445.
func folderText(d registry.Destination) string {
	s := smbcheck.UNC(d.Host, d.Share, d.Path)
	if d.Port != 0 && d.Port != 445 {
		s += " port " + strconv.Itoa(d.Port)
	}
	return s
}
