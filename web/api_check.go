package web

import "net/http"

// POST /api/v1/destinations/{name}/check — runs a check now and answers
// with its report (the check's own JSON: target, steps, verdict, …).
func (s *Server) apiCheck(w http.ResponseWriter, r *http.Request, a actor) {
	if s.cfg.Checker == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	run, started := s.runs.start(name, s.cfg.Checker)
	if run == nil {
		writeAPIError(w, http.StatusServiceUnavailable, "too many checks are running")
		return
	}
	if started {
		s.audit(r.Context(), a, r, "check.run", name, "")
	}
	for {
		_, done, changed := run.snapshot(0)
		if done {
			break
		}
		select {
		case <-changed:
		case <-r.Context().Done():
			return
		}
	}
	rep, err := run.result()
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rep)
}
