package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/scanwarden/scanwarden/registry"
)

type devicesView struct {
	Columns []column
	Devices []registry.DeviceView
	CanEdit bool // a DeviceManager is wired: add, edit and remove show
}

// devicesPage lists the devices, sortable, each with its state.
func (s *devicePages) devicesPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.fail(w, r, "device list", ErrNotRunning)
		return
	}
	devs, err := s.fleet.Devices(r.Context())
	if err != nil {
		s.fail(w, r, "device list", err)
		return
	}
	name := func(d registry.DeviceView) string { return d.Name }
	cols := sortList(r.URL.Query(), "/devices", "name", devs, name, []sortable[registry.DeviceView]{
		{column{Key: "name", Label: "Device"}, name},
		{column{Key: "address", Label: "Address", Wide: true}, func(d registry.DeviceView) string { return d.Address }},
		{column{Key: "model", Label: "Model", Wide: true}, func(d registry.DeviceView) string { return d.Model }},
		{column{Key: "state", Label: "State"}, deviceState},
		{column{Key: "seen", Label: "Last seen"}, func(d registry.DeviceView) string { return d.LastSeen.UTC().Format(time.RFC3339Nano) }},
		{column{Key: "destinations", Label: "Destinations", Wide: true},
			func(d registry.DeviceView) string { return strconv.Itoa(1_000_000 + d.DestinationCount) }},
	})
	s.render(w, http.StatusOK, "devices", pageData{Title: "Devices", Nav: "devices", LoggedIn: true,
		Flash: flashFor(r.URL.Query().Get("done")), Data: devicesView{Columns: cols, Devices: devs, CanEdit: s.deviceManager != nil}})
}

// deviceState orders devices: at fault first, then silent, then answering.
func deviceState(d registry.DeviceView) string {
	switch {
	case d.Fault != "":
		return "0 " + d.Fault
	case !d.Reachable:
		return "1"
	}
	return "2"
}
