package web

import (
	"net/http"
	"strconv"
)

// incidentPage shows one incident and its timeline.
func (s *historyPages) incidentPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.incidents == nil {
		s.fail(w, r, "incident", ErrNotRunning)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.fail(w, r, "incident", ErrNotFound)
		return
	}
	in, err := s.incidents.Incident(r.Context(), id)
	if err != nil {
		s.fail(w, r, "incident", err)
		return
	}
	s.render(w, http.StatusOK, "incident", pageData{Title: "Incident " + strconv.FormatInt(id, 10), Nav: "incidents",
		LoggedIn: true, Data: in})
}
