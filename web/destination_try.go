package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/scanwarden/scanwarden/smbcheck"
)

// POST /destinations/_test — "Test before saving": the form's destination
// is checked as it would be stored, live over the event stream as Run
// check now is; nothing is stored. The page's script asks for JSON and
// follows /runs/{id}/events; without script the form waits for the check
// and comes back with its report.
func (s *destinationForms) destinationTry(w http.ResponseWriter, r *http.Request, a actor) {
	dm := s.destinationManager
	if dm == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return
	}
	in, ok := s.destinationForm(w, r)
	if !ok {
		return
	}
	run := s.runs.startTry(func(ctx context.Context, progress func(smbcheck.Step)) (smbcheck.Report, error) {
		return dm.TryDestination(ctx, in, progress)
	})
	if run == nil {
		http.Error(w, "too many checks are running; try again shortly", http.StatusServiceUnavailable)
		return
	}
	s.audit(r.Context(), a, r, "destination.test", in.Name, in.Folder+" as "+in.User)
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		writeJSON(w, http.StatusAccepted, map[string]string{"run": run.id, "events": "/runs/" + run.id + "/events"})
		return
	}
	rep, err := run.wait(r.Context())
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		s.destinationFormError(w, r, in, err)
		return
	}
	v := s.formAgain(r.Context(), in)
	v.Tried = rep
	s.renderDestinationForm(w, r, http.StatusOK, v, "")
}
