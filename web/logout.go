package web

import "net/http"

// logout ends the session on the server, not only in the browser.
func (s *accountPages) logout(w http.ResponseWriter, r *http.Request, a actor) {
	s.sessions.drop(a.session)
	if err := s.auth.DeleteSession(r.Context(), a.session); err != nil {
		s.log.Error("delete session", "err", err)
	}
	s.audit(r.Context(), a, r, "logout", "admin", "")
	s.clearCookie(w)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
