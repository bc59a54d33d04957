package web

import (
	"net/http"

	"github.com/scanwarden/scanwarden/incident"
)

type incidentsView struct {
	State     string
	Incidents []incident.View
}

// incidentsPage lists incidents, open ones by default.
func (s *historyPages) incidentsPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.incidents == nil {
		s.fail(w, r, "incidents", ErrNotRunning)
		return
	}
	state := r.URL.Query().Get("state")
	if state != "closed" && state != "all" {
		state = "open"
	}
	q := state
	if q == "all" {
		q = ""
	}
	list, err := s.incidents.Incidents(r.Context(), q, 200)
	if err != nil {
		s.fail(w, r, "incidents", err)
		return
	}
	s.render(w, http.StatusOK, "incidents", pageData{Title: "Incidents", Nav: "incidents", LoggedIn: true,
		Data: incidentsView{State: state, Incidents: list}})
}
