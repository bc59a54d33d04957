package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
)

// Editor changes what is stored about a destination.
type Editor interface {
	// SetAuth sets how the destination logs on: ntlm, kerberos or auto
	// (ErrNotFound for an unknown destination).
	SetAuth(ctx context.Context, destination string, auth scanwarden.Auth) error
	// SetBridged bridges the destination (on) or ends its bridge; changed
	// is false when it already was so (ErrNotFound for an unknown one).
	SetBridged(ctx context.Context, destination string, on bool) (changed bool, err error)
}

// POST /destinations/{name}/auth — the destination page's auth form.
func (s *destinationPages) destinationAuth(w http.ResponseWriter, r *http.Request, a actor) {
	name := r.PathValue("name")
	if s.editor == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return
	}
	auth, err := scanwarden.ParseAuth(r.FormValue("auth"))
	if err != nil {
		http.Error(w, "auth: want ntlm, kerberos or auto", http.StatusBadRequest)
		return
	}
	if err := s.editor.SetAuth(r.Context(), name, auth); err != nil {
		s.fail(w, r, "destination", err)
		return
	}
	s.audit(r.Context(), a, r, "destination.auth", name, string(auth))
	http.Redirect(w, r, "/destinations/"+url.PathEscape(name), http.StatusSeeOther)
}

// POST /api/v1/destinations/{name}/auth — {"auth": "ntlm"|"kerberos"|"auto"}
// (or a form value auth); answers the destination.
func (s *destinationPages) apiDestinationAuth(w http.ResponseWriter, r *http.Request, a actor) {
	if s.editor == nil || s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	v := r.FormValue("auth")
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			Auth string `json:"auth"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeAPIError(w, http.StatusBadRequest, "body: want {\"auth\": \"ntlm\"|\"kerberos\"|\"auto\"}")
			return
		}
		v = body.Auth
	}
	if strings.TrimSpace(v) == "" {
		writeAPIError(w, http.StatusBadRequest, "auth: missing (ntlm, kerberos or auto)")
		return
	}
	auth, err := scanwarden.ParseAuth(v)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, "auth: want ntlm, kerberos or auto")
		return
	}
	if err := s.editor.SetAuth(r.Context(), name, auth); err != nil {
		s.apiFail(w, r, err)
		return
	}
	s.audit(r.Context(), a, r, "destination.auth", name, string(auth))
	d, err := s.fleet.Destination(r.Context(), name)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}
