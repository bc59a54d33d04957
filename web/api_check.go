package web

import "net/http"

// POST /api/v1/destinations/{name}/check — runs a check now and answers
// with its report (the check's own JSON: target, steps, verdict, …).
func (s *destinationPages) apiCheck(w http.ResponseWriter, r *http.Request, a actor) {
	if s.checker == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	run, started := s.runs.start(name, s.checker)
	if run == nil {
		writeAPIError(w, http.StatusServiceUnavailable, "too many checks are running")
		return
	}
	if started {
		s.audit(r.Context(), a, r, "check.run", name, "")
	}
	rep, err := run.wait(r.Context())
	if r.Context().Err() != nil {
		return // the client went away; the check goes on
	}
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
