package web

import (
	"net/http"
	"time"
)

// GET /api/v1/audit — admin actions, newest first.
func (s *historyPages) apiAudit(w http.ResponseWriter, r *http.Request, _ actor) {
	list, err := s.auth.Audit(r.Context(), limitParam(r, 200, 5000))
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	type entry struct {
		ID     int64     `json:"id"`
		At     time.Time `json:"at"`
		Actor  string    `json:"actor"`
		Client string    `json:"client"`
		Action string    `json:"action"`
		Target string    `json:"target"`
		Detail string    `json:"detail,omitempty"`
		Count  int       `json:"count"`          // an anonymous row: attempts from client in that hour
		First  time.Time `json:"first,omitzero"` // an anonymous row's first attempt
	}
	out := make([]entry, 0, len(list))
	for _, e := range list {
		out = append(out, entry(e))
	}
	writeJSON(w, http.StatusOK, map[string]any{"audit": out})
}
