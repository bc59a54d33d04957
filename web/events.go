package web

import (
	"net/http"
	"strings"

	"github.com/scanwarden/scanwarden/incident"
)

// whichParam reads ?unverified=1 (only unverified events), =0 (only the
// watched devices' own), absent (both, the unverified ones marked).
func whichParam(r *http.Request) (Which, bool) {
	switch strings.TrimSpace(r.URL.Query().Get("unverified")) {
	case "":
		return EventsAll, true
	case "1", "true", "only":
		return EventsUnverified, true
	case "0", "false", "none":
		return EventsVerified, true
	}
	return EventsAll, false
}

type eventsView struct {
	Which  Which
	Events []incident.EventView
}

// eventsPage lists the devices' recent send failures with their meaning;
// unverified ones (sender not proven to be the device) are marked as such.
func (s *historyPages) eventsPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.events == nil {
		s.fail(w, r, "events", ErrNotRunning)
		return
	}
	which, _ := whichParam(r)
	list, err := s.events.Events(r.Context(), EventQuery{Which: which, Limit: 200})
	if err != nil {
		s.fail(w, r, "events", err)
		return
	}
	s.render(w, http.StatusOK, "events", pageData{Title: "Send failures", Nav: "events", LoggedIn: true,
		Data: eventsView{Which: which, Events: list}})
}
