package web

import (
	"net/http"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
)

// tokenCreate makes an API token and shows it once.
func (s *settingsPages) tokenCreate(w http.ResponseWriter, r *http.Request, a actor) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	scope := r.PostFormValue("scope")
	tok, err := CreateToken(r.Context(), s.auth, name, scope, s.now())
	if err != nil {
		s.renderSettings(w, r, http.StatusBadRequest, settingsView{TokenName: name}, "", "The token was not made: "+err.Error())
		return
	}
	if scope == "" {
		scope = string(scanwarden.ScopeRead)
	}
	s.audit(r.Context(), a, r, "token.create", name, "scope "+scope)
	s.renderSettings(w, r, http.StatusOK, settingsView{NewToken: tok, TokenName: name}, "", "")
}

// tokenDelete revokes a token.
func (s *settingsPages) tokenDelete(w http.ResponseWriter, r *http.Request, a actor) {
	name := r.PathValue("name")
	if err := s.auth.DeleteToken(r.Context(), name); err != nil {
		s.log.Error("delete token", "token", name, "err", err)
		s.renderSettings(w, r, http.StatusBadRequest, settingsView{}, "", "The token "+name+" could not be revoked (is it still listed?).")
		return
	}
	s.touched.Delete(name)
	s.audit(r.Context(), a, r, "token.delete", name, "")
	http.Redirect(w, r, "/settings?done=revoked#tokens", http.StatusSeeOther)
}
