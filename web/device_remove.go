package web

import (
	"errors"
	"net/http"

	scanwarden "github.com/scanwarden/scanwarden"
)

// GET /devices/{name}/remove — what removing it does, and the button.
func (s *devicePages) deviceRemoveForm(w http.ResponseWriter, r *http.Request, _ actor) {
	d, ok := s.editedDevice(w, r)
	if !ok {
		return
	}
	s.render(w, http.StatusOK, "device_remove", pageData{Title: "Remove device " + d.Name, Nav: "devices", LoggedIn: true, Data: d})
}

// POST /devices/{name}/remove — with_destinations removes its
// destinations too; without, a device that has some is refused.
func (s *devicePages) deviceRemove(w http.ResponseWriter, r *http.Request, a actor) {
	if s.deviceManager == nil {
		s.fail(w, r, "device editor", ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	with := r.PostFormValue("with_destinations") == "on"
	if err := s.deviceManager.RemoveDevice(r.Context(), name, with); err != nil {
		var fe *scanwarden.FieldError
		if errors.As(err, &fe) && s.fleet != nil {
			if d, derr := s.fleet.Device(r.Context(), name); derr == nil {
				s.render(w, http.StatusBadRequest, "device_remove", pageData{Title: "Remove device " + d.Name, Nav: "devices",
					LoggedIn: true, Error: "Not removed: " + fe.Reason, Data: d})
				return
			}
		}
		s.fail(w, r, "device", err)
		return
	}
	detail := ""
	if with {
		detail = "with its destinations"
	}
	s.audit(r.Context(), a, r, "device.remove", name, detail)
	http.Redirect(w, r, "/devices?done=removed", http.StatusSeeOther)
}
