package web

import "net/http"

// GET /api/v1/events[?device=NAME][&unverified=1|0][&limit=N] — newest first.
// unverified=1: only events whose sender was not proven to be the device;
// 0: only the devices' own; absent: both, each with "unverified".
func (s *historyPages) apiEvents(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.events == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	which, ok := whichParam(r)
	if !ok {
		writeAPIError(w, http.StatusBadRequest, "unverified must be 1 or 0")
		return
	}
	list, err := s.events.Events(r.Context(), EventQuery{Device: r.URL.Query().Get("device"), Which: which,
		Limit: limitParam(r, 200, 5000)})
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": nonNil(list)})
}
