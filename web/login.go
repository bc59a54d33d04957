package web

import (
	"net/http"
	"strconv"
)

type loginView struct {
	Next    string
	NoAdmin bool
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.session(r); ok {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	h, err := s.cfg.Auth.AdminPassword(r.Context())
	if err != nil {
		s.log.Error("read admin password", "err", err)
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, http.StatusOK, "login", pageData{Title: "Log in",
		Data: loginView{Next: safeNext(r.URL.Query().Get("next")), NoAdmin: err == nil && h == ""}})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !s.formOK(w, r) {
		return
	}
	addr := clientAddr(r)
	next := safeNext(r.PostFormValue("next"))
	view := loginView{Next: next}
	if ok, wait := s.limiter.allow(addr); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		s.render(w, http.StatusTooManyRequests, "login", pageData{Title: "Log in", Data: view,
			Error: "Too many failed logins from this address. Try again in " + strconv.Itoa(int(wait.Minutes())+1) + " min."})
		return
	}
	user, password := r.PostFormValue("user"), r.PostFormValue("password")
	hash, err := s.cfg.Auth.AdminPassword(r.Context())
	if err != nil {
		s.log.Error("read admin password", "err", err)
		s.render(w, http.StatusInternalServerError, "login", pageData{Title: "Log in", Data: view, Error: "Could not read the admin account."})
		return
	}
	if hash == "" {
		view.NoAdmin = true
		s.render(w, http.StatusUnauthorized, "login", pageData{Title: "Log in", Data: view,
			Error: "No admin password is set yet."})
		return
	}
	if user != "admin" || len(password) > 1024 || !checkPassword(hash, password) {
		s.limiter.fail(addr)
		s.audit(r.Context(), actor{}, r, "login.failed", "admin", "")
		s.render(w, http.StatusUnauthorized, "login", pageData{Title: "Log in", Data: view, Error: "Wrong user name or password."})
		return
	}
	s.limiter.succeed(addr)
	if err := s.startSession(w, r); err != nil {
		s.log.Error("create session", "err", err)
		s.render(w, http.StatusInternalServerError, "login", pageData{Title: "Log in", Data: view, Error: "Could not start a session."})
		return
	}
	s.audit(r.Context(), actor{name: "admin"}, r, "login", "admin", "")
	http.Redirect(w, r, next, http.StatusSeeOther)
}
