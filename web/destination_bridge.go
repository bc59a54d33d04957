package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// POST /destinations/{name}/bridge — the destination page's Bridge (and
// End the bridge) button: bridge=on or off.
func (s *destinationPages) destinationBridge(w http.ResponseWriter, r *http.Request, a actor) {
	if s.editor == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return
	}
	on, ok := bridgeValue(r.PostFormValue("bridge"))
	if !ok {
		http.Error(w, "bridge: want on or off", http.StatusBadRequest)
		return
	}
	name := r.PathValue("name")
	if !s.setBridged(w, r, a, name, on, s.fail) {
		return
	}
	http.Redirect(w, r, "/destinations/"+url.PathEscape(name)+"#bridge", http.StatusSeeOther)
}

// POST /api/v1/destinations/{name}/bridge — {"bridged": true|false} (or a
// form value bridge=on|off); answers the destination with its bridge.
func (s *destinationPages) apiDestinationBridge(w http.ResponseWriter, r *http.Request, a actor) {
	if s.editor == nil || s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	on, ok := bridgeValue(r.FormValue("bridge"))
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var body struct {
			Bridged *bool `json:"bridged"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Bridged == nil {
			writeAPIError(w, http.StatusBadRequest, "body: want {\"bridged\": true|false}")
			return
		}
		on, ok = *body.Bridged, true
	}
	if !ok {
		writeAPIError(w, http.StatusBadRequest, "bridged: missing (true or false)")
		return
	}
	name := r.PathValue("name")
	fail := func(w http.ResponseWriter, r *http.Request, _ string, err error) { s.apiFail(w, r, err) }
	if !s.setBridged(w, r, a, name, on, fail) {
		return
	}
	d, err := s.fleet.Destination(r.Context(), name)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// setBridged stores the bridge and audits a change; fail answers an error.
func (s *destinationPages) setBridged(w http.ResponseWriter, r *http.Request, a actor, name string, on bool,
	fail func(http.ResponseWriter, *http.Request, string, error)) bool {
	changed, err := s.editor.SetBridged(r.Context(), name, on)
	if err != nil {
		fail(w, r, "destination", err)
		return false
	}
	if changed {
		action := "destination.bridge"
		if !on {
			action = "destination.unbridge"
		}
		s.audit(r.Context(), a, r, action, name, "")
	}
	return true
}

func bridgeValue(v string) (on, ok bool) {
	switch v {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}
