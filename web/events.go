package web

import "net/http"

// eventsPage lists the devices' recent send failures with their meaning.
func (s *Server) eventsPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.cfg.Events == nil {
		s.fail(w, r, "events", ErrNotRunning)
		return
	}
	list, err := s.cfg.Events.Events(r.Context(), "", 200)
	if err != nil {
		s.fail(w, r, "events", err)
		return
	}
	s.render(w, http.StatusOK, "events", pageData{Title: "Send failures", Nav: "events", LoggedIn: true, Data: list})
}
