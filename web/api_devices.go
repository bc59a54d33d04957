package web

import "net/http"

// GET /api/v1/devices
func (s *devicePages) apiDevices(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	list, err := s.fleet.Devices(r.Context())
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": nonNil(list)})
}

// GET /api/v1/devices/{name}
func (s *devicePages) apiDevice(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	d, err := s.fleet.Device(r.Context(), r.PathValue("name"))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}
