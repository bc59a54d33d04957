package web

import (
	"net/http"
	"strconv"
)

// GET /api/v1/incidents[?state=open|closed] — with timelines.
func (s *historyPages) apiIncidents(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.incidents == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	state := r.URL.Query().Get("state")
	if state != "" && state != "open" && state != "closed" {
		writeAPIError(w, http.StatusBadRequest, "state must be open or closed")
		return
	}
	list, err := s.incidents.Incidents(r.Context(), state, limitParam(r, 100, 1000))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	for i := range list {
		if list[i].Timeline == nil {
			full, err := s.incidents.Incident(r.Context(), list[i].ID)
			if err != nil {
				s.apiFail(w, r, err)
				return
			}
			list[i].Timeline = nonNil(full.Timeline)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"incidents": nonNil(list)})
}

// GET /api/v1/incidents/{id}
func (s *historyPages) apiIncident(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.incidents == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeAPIError(w, http.StatusNotFound, "not found")
		return
	}
	in, err := s.incidents.Incident(r.Context(), id)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	in.Timeline = nonNil(in.Timeline)
	writeJSON(w, http.StatusOK, in)
}
