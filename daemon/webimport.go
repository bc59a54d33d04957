package daemon

import (
	"bytes"
	"context"
	"fmt"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/web"
)

// webImporter imports a device's address-book export from the page, as
// `scanwarden import addressbook` does (the device is added when new).
type webImporter struct{ m *Main }

var _ web.Importer = webImporter{}

func (i webImporter) Import(ctx context.Context, device string, export []byte, dryRun bool) (registry.ImportView, error) {
	if err := registry.ValidName(device); err != nil {
		return registry.ImportView{}, fmt.Errorf("device name: %w", err)
	}
	book, err := registry.ReadAddressBook(bytes.NewReader(export))
	if err != nil {
		return registry.ImportView{}, err
	}
	res, err := i.m.st.Destinations().ImportAddressBook(ctx, device, book, dryRun)
	if err != nil {
		return registry.ImportView{}, err
	}
	if !dryRun {
		i.m.SyncDevices(ctx)
	}
	return res.View(res.DeviceCreated, res.DryRun), nil
}
