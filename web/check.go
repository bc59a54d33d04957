package web

import (
	"net/http"
	"net/url"
	"strings"
)

// checkNow starts a check of a destination. The page's script asks for JSON
// and then follows the run's event stream; without script the form waits
// for the check and shows the destination page with its new report.
func (s *destinationPages) checkNow(w http.ResponseWriter, r *http.Request, a actor) {
	if s.checker == nil {
		s.fail(w, r, "checker", ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	if s.fleet != nil {
		if _, err := s.fleet.Destination(r.Context(), name); err != nil {
			s.fail(w, r, "destination", err)
			return
		}
	}
	run, started := s.runs.start(name, s.checker)
	if run == nil {
		http.Error(w, "too many checks are running; try again shortly", http.StatusServiceUnavailable)
		return
	}
	if started {
		s.audit(r.Context(), a, r, "check.run", name, "")
	}
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		writeJSON(w, http.StatusAccepted, map[string]string{"run": run.id, "events": "/runs/" + run.id + "/events"})
		return
	}
	if _, err := run.wait(r.Context()); err != nil {
		if r.Context().Err() != nil {
			return // the browser went away; the check goes on
		}
		s.fail(w, r, "check", err)
		return
	}
	http.Redirect(w, r, "/destinations/"+url.PathEscape(name)+"?checked=1", http.StatusSeeOther)
}
