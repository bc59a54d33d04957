package web

import "net/http"

// GET /api/v1/scans[?state=held|…] — the fallback share's catalogue.
func (s *receiverPages) apiScans(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.receiver == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	list, err := s.receiver.Scans(r.Context(), r.URL.Query().Get("state"), limitParam(r, 500, 10000))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"scans": nonNil(list)})
}
