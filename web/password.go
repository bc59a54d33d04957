package web

import (
	"fmt"
	"net/http"
)

// passwordChange sets a new admin password (the current one is asked) and
// ends every session but a new one for this browser.
func (s *settingsPages) passwordChange(w http.ResponseWriter, r *http.Request, a actor) {
	cur, p1, p2 := r.PostFormValue("current"), r.PostFormValue("password"), r.PostFormValue("confirm")
	hash, err := s.auth.AdminPassword(r.Context())
	if err != nil {
		s.fail(w, r, "admin account", err)
		return
	}
	ticket, refused, _ := s.limiter.reserve(peerAddr(r))
	if refused != "" {
		s.renderSettings(w, r, http.StatusTooManyRequests, settingsView{}, "", "Too many wrong passwords from this address; try later.")
		return
	}
	if len(cur) > 1024 || !checkPassword(hash, cur) {
		s.renderSettings(w, r, http.StatusBadRequest, settingsView{}, "", "The current password is wrong.")
		return
	}
	s.limiter.succeed(ticket)
	if p1 != p2 {
		s.renderSettings(w, r, http.StatusBadRequest, settingsView{}, "", "The two new passwords differ.")
		return
	}
	// The form's "revoke every API token" box is checked by default; a
	// form without the field (an older page) keeps them.
	revoke := r.PostFormValue("revoke_tokens") != ""
	n, err := SetPassword(r.Context(), s.auth, p1, revoke)
	if err != nil {
		s.renderSettings(w, r, http.StatusBadRequest, settingsView{}, "", "Not changed: "+err.Error())
		return
	}
	s.sessions.clear() // every session ended with the change
	s.touched.Clear()
	detail := "settings page"
	if revoke {
		detail += fmt.Sprintf("; %d API token(s) revoked", n)
	}
	s.audit(r.Context(), a, r, "password.set", "admin", detail)
	if err := s.startSession(w, r); err != nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/settings?done=password", http.StatusSeeOther)
}
