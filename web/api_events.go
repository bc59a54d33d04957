package web

import "net/http"

// GET /api/v1/events[?device=NAME][&limit=N] — newest first.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.cfg.Events == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	list, err := s.cfg.Events.Events(r.Context(), r.URL.Query().Get("device"), limitParam(r, 200, 5000))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": nonNil(list)})
}
