package web

import "net/http"

type setupView struct{ Token string }

// setupForm is the page behind the one-time link printed at first start.
func (s *accountPages) setupForm(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	tok := r.URL.Query().Get("token")
	if !s.checkSetup(tok, false) {
		s.render(w, http.StatusNotFound, "error", pageData{Title: "Setup",
			Error: "This setup link is not valid (used, expired, or an admin password is already set). Run `scanwarden admin set-password` on the server, or restart the daemon for a new link."})
		return
	}
	s.render(w, http.StatusOK, "setup", pageData{Title: "Set the admin password", Data: setupView{Token: tok}})
}

func (s *accountPages) setupSubmit(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !s.formOK(w, r) {
		return
	}
	tok := r.PostFormValue("token")
	p1, p2 := r.PostFormValue("password"), r.PostFormValue("confirm")
	if !s.checkSetup(tok, false) {
		s.render(w, http.StatusNotFound, "error", pageData{Title: "Setup", Error: "This setup link is not valid any more."})
		return
	}
	if h, err := s.auth.AdminPassword(r.Context()); err != nil || h != "" {
		s.render(w, http.StatusConflict, "error", pageData{Title: "Setup", Error: "An admin password is already set."})
		return
	}
	if p1 != p2 {
		s.render(w, http.StatusBadRequest, "setup", pageData{Title: "Set the admin password", Data: setupView{Token: tok},
			Error: "The two passwords differ."})
		return
	}
	if _, err := SetPassword(r.Context(), s.auth, p1, false); err != nil {
		s.render(w, http.StatusBadRequest, "setup", pageData{Title: "Set the admin password", Data: setupView{Token: tok},
			Error: err.Error()})
		return
	}
	s.sessions.clear() // every session ended with the change
	s.checkSetup(tok, true)
	if s.setupDone != nil {
		s.setupDone()
	}
	s.audit(r.Context(), actor{name: "admin"}, r, "password.set", "admin", "setup link")
	if err := s.startSession(w, r); err != nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
