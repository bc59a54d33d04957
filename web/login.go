package web

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"time"
)

type loginView struct {
	Next    string
	NoAdmin bool
}

func (s *accountPages) loginForm(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.session(r); ok {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	h, err := s.auth.AdminPassword(r.Context())
	if err != nil {
		s.log.Error("read admin password", "err", err)
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, http.StatusOK, "login", pageData{Title: "Log in",
		Data: loginView{Next: safeNext(r.URL.Query().Get("next")), NoAdmin: err == nil && h == ""}})
}

func (s *accountPages) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !s.formOK(w, r) {
		return
	}
	next := safeNext(r.PostFormValue("next"))
	view := loginView{Next: next}
	hash, err := s.auth.AdminPassword(r.Context())
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
	// The guess is counted before it is evaluated: a request cut during
	// the hash, or many sent at once, are counted all the same.
	ticket, refused, wait := s.limiter.reserve(peerAddr(r))
	if refused != "" {
		why := "Too many failed logins from this address."
		switch refused {
		case refusedPrefix:
			why = "Too many failed logins from this network."
		case refusedGlobal:
			why = "Too many failed logins to this box."
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		s.render(w, http.StatusTooManyRequests, "login", pageData{Title: "Log in", Data: view,
			Error: why + " Try again in " + humanWait(wait) + "."})
		return
	}
	user, password := r.PostFormValue("user"), r.PostFormValue("password")
	// Every user name costs the same hash: a name that is not the admin's
	// is refused only after it, and counts as a guess like any other.
	right := len(password) <= 1024 && checkPassword(hash, password)
	if subtle.ConstantTimeCompare([]byte(user), []byte("admin")) != 1 || !right {
		s.audit(r.Context(), actor{}, r, "login.failed", "admin", "")
		s.render(w, http.StatusUnauthorized, "login", pageData{Title: "Log in", Data: view, Error: "Wrong user name or password."})
		return
	}
	s.limiter.succeed(ticket)
	if err := s.startSession(w, r); err != nil {
		s.log.Error("create session", "err", err)
		s.render(w, http.StatusInternalServerError, "login", pageData{Title: "Log in", Data: view, Error: "Could not start a session."})
		return
	}
	s.audit(r.Context(), actor{name: "admin"}, r, "login", "admin", "")
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// humanWait says a Retry-After in words: seconds under a minute, else
// minutes rounded up.
func humanWait(d time.Duration) string {
	if d < time.Minute {
		return strconv.Itoa(int(d.Seconds())+1) + " s"
	}
	return strconv.Itoa(int(d.Minutes())+1) + " min"
}
