package web

import (
	"net/http"

	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/registry"
)

type deviceView struct {
	Device    registry.DeviceView
	Events    []incident.EventView
	CanManage bool // a DeviceManager is wired: edit and remove show
	CanAdd    bool // a DestinationManager is wired: "add a destination" shows
	// CanEditProfile: a ProfileEditor is wired (the profile form shows).
	CanEditProfile bool
}

// devicePage shows one MFP: inventory, recent send failures explained from
// the code book, its destinations.
func (s *devicePages) devicePage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.fail(w, r, "device", ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	d, err := s.fleet.Device(r.Context(), name)
	if err != nil {
		s.fail(w, r, "device", err)
		return
	}
	v := deviceView{Device: d, CanManage: s.deviceManager != nil, CanAdd: s.destinationManager != nil,
		CanEditProfile: s.profiles != nil}
	if s.events != nil {
		if v.Events, err = s.events.Events(r.Context(), EventQuery{Device: d.Name, Which: EventsVerified, Limit: 50}); err != nil {
			s.log.Error("device events", "device", d.Name, "err", err)
		}
	}
	s.render(w, http.StatusOK, "device", pageData{Title: "Device " + d.Name, Nav: "devices", LoggedIn: true,
		Flash: flashFor(r.URL.Query().Get("done")), Data: v})
}
