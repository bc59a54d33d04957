package web

import (
	"net/http"

	"github.com/scanwarden/scanwarden/registry"
)

// GET /api/v1/destinations — each with its last verdict.
func (s *destinationPages) apiDestinations(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	list, err := s.fleet.Destinations(r.Context())
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"destinations": nonNil(list)})
}

// GET /api/v1/destinations/{name} — with its last report and history.
func (s *destinationPages) apiDestination(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	d, err := s.fleet.Destination(r.Context(), r.PathValue("name"))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	h, err := s.fleet.History(r.Context(), d.Name, limitParam(r, 20, 200))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		registry.DestinationView
		History []registry.ReportView `json:"history"`
	}{d, nonNil(h)})
}
