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
	if s.cfg.Fleet == nil {
		s.fail(w, r, "device list", ErrNotRunning)
		return
	}
	devs, err := s.cfg.Fleet.Devices(r.Context())
	if err != nil {
		s.fail(w, r, "device list", err)
		return
	}
	key, desc, cols := listSort(r.URL.Query(), "/devices", "name", []column{
		{Key: "name", Label: "Device"}, {Key: "address", Label: "Address", Wide: true}, {Key: "model", Label: "Model", Wide: true},
		{Key: "state", Label: "State"}, {Key: "seen", Label: "Last seen"}, {Key: "destinations", Label: "Destinations", Wide: true},
	})
	sortBy(devs, desc, func(d registry.DeviceView) string {
		switch key {
		case "address":
			return d.Address
		case "model":
			return d.Model
		case "state":
			return deviceState(d)
		case "seen":
			return d.LastSeen.UTC().Format(time.RFC3339Nano)
		case "destinations":
			return strconv.Itoa(1_000_000 + d.DestinationCount)
		}
		return d.Name
	}, func(d registry.DeviceView) string { return d.Name })
	s.render(w, http.StatusOK, "devices", pageData{Title: "Devices", Nav: "devices", LoggedIn: true,
		Flash: flashFor(r.URL.Query().Get("done")), Data: devicesView{Columns: cols, Devices: devs, CanEdit: s.cfg.DeviceManager != nil}})
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
