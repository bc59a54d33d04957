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
	if s.cfg.Fleet == nil {
		s.fail(w, r, "device", ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	d, err := s.cfg.Fleet.Device(r.Context(), name)
	if err != nil {
		s.fail(w, r, "device", err)
		return
	}
	v := deviceView{Device: d, CanManage: s.cfg.DeviceManager != nil, CanAdd: s.cfg.DestinationManager != nil,
		CanEditProfile: s.cfg.Profiles != nil}
	if s.cfg.Events != nil {
		if v.Events, err = s.cfg.Events.Events(r.Context(), EventQuery{Device: d.Name, Which: EventsVerified, Limit: 50}); err != nil {
			s.log.Error("device events", "device", d.Name, "err", err)
		}
	}
	s.render(w, http.StatusOK, "device", pageData{Title: "Device " + d.Name, Nav: "devices", LoggedIn: true,
		Flash: flashFor(r.URL.Query().Get("done")), Data: v})
}
