package web

import "net/http"

// auditPage lists the admin actions, newest first.
func (s *historyPages) auditPage(w http.ResponseWriter, r *http.Request, _ actor) {
	list, err := s.auth.Audit(r.Context(), 500)
	if err != nil {
		s.fail(w, r, "audit log", err)
		return
	}
	s.render(w, http.StatusOK, "audit", pageData{Title: "Audit log", Nav: "audit", LoggedIn: true, Data: list})
}
