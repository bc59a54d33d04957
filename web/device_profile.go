package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
)

// ProfileEditor sets the admin's values of a device's SMB profile (its
// checks replay as that client): set holds the fields given, each in
// registry.ParseProfileValue's spelling; clear the fields whose setting is
// dropped (what was seen, or the default, applies again). ErrNotFound for
// an unknown device; a *scanwarden.FieldError for a value its checks
// cannot replay.
type ProfileEditor interface {
	SetDeviceProfile(ctx context.Context, device string, set map[registry.ProfileField]string, clear []registry.ProfileField) error
}

// profileForm reads the device page's profile form (or the API's JSON
// body): each field either a value, or "" / "auto" for "as seen, else the
// default".
func profileForm(values map[string]string) (set map[registry.ProfileField]string, clear []registry.ProfileField, err error) {
	set = map[registry.ProfileField]string{}
	for _, f := range registry.ProfileFields {
		v, ok := values[string(f)]
		if !ok {
			continue
		}
		if v = strings.TrimSpace(v); v == "" || v == "auto" {
			clear = append(clear, f)
			continue
		}
		w, err := registry.ParseProfileValue(f, v)
		if err != nil {
			return nil, nil, err
		}
		set[f] = w
	}
	return set, clear, nil
}

// auditProfile words a profile change for the audit log.
func auditProfile(set map[registry.ProfileField]string, clear []registry.ProfileField) string {
	var parts []string
	for _, f := range registry.ProfileFields {
		if v, ok := set[f]; ok {
			parts = append(parts, string(f)+"="+v)
		}
	}
	for _, f := range clear {
		parts = append(parts, string(f)+"=auto")
	}
	return strings.Join(parts, " ")
}

// POST /devices/{name}/profile — the device page's SMB profile form.
func (s *devicePages) deviceProfile(w http.ResponseWriter, r *http.Request, a actor) {
	name := r.PathValue("name")
	if s.profiles == nil {
		s.fail(w, r, "device profile", ErrNotRunning)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "form: "+err.Error(), http.StatusBadRequest)
		return
	}
	vals := map[string]string{}
	for _, f := range registry.ProfileFields {
		if r.PostForm.Has(string(f)) {
			vals[string(f)] = r.PostForm.Get(string(f))
		}
	}
	set, clear, err := profileForm(vals)
	if err == nil {
		err = s.profiles.SetDeviceProfile(r.Context(), name, set, clear)
	}
	if err != nil {
		if fe := fieldError(err); fe != "" {
			http.Error(w, fe, http.StatusBadRequest)
			return
		}
		s.fail(w, r, "device", err)
		return
	}
	s.audit(r.Context(), a, r, "device.profile", name, auditProfile(set, clear))
	http.Redirect(w, r, "/devices/"+url.PathEscape(name)+"#smb-profile", http.StatusSeeOther)
}

// POST /api/v1/devices/{name}/profile — {"max_dialect": "2.1",
// "encryption": "no", "file_type": "auto", …}: the fields given are set
// ("auto" or "" clears one); answers the device.
func (s *devicePages) apiDeviceProfile(w http.ResponseWriter, r *http.Request, a actor) {
	if s.profiles == nil || s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	var vals map[string]string
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10)).Decode(&vals); err != nil {
		writeAPIError(w, http.StatusBadRequest, "body: want a JSON object of profile fields (max_dialect, min_dialect, signing, encryption, ntlm, kerberos, file_type)")
		return
	}
	for k := range vals {
		if _, err := registry.ParseProfileField(k); err != nil {
			writeAPIError(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	set, clear, err := profileForm(vals)
	if err == nil {
		err = s.profiles.SetDeviceProfile(r.Context(), name, set, clear)
	}
	if err != nil {
		if fe := fieldError(err); fe != "" {
			writeAPIError(w, http.StatusBadRequest, fe)
			return
		}
		s.apiFail(w, r, err)
		return
	}
	s.audit(r.Context(), a, r, "device.profile", name, auditProfile(set, clear))
	d, err := s.fleet.Device(r.Context(), name)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// fieldError is err's field error in words ("" when it has none): a value
// of the form that cannot be stored is the admin's to correct (400).
func fieldError(err error) string {
	var fe *scanwarden.FieldError
	if errors.As(err, &fe) {
		return fe.Error()
	}
	return ""
}

// profileLabel names a profile field on the device page.
func profileLabel(f registry.ProfileField) string {
	switch f {
	case registry.FieldMaxDialect:
		return "Highest SMB dialect"
	case registry.FieldMinDialect:
		return "Lowest SMB dialect"
	case registry.FieldSigning:
		return "Signs"
	case registry.FieldEncryption:
		return "Can encrypt"
	case registry.FieldNTLM:
		return "NTLM level"
	case registry.FieldKerberos:
		return "Kerberos"
	case registry.FieldFileType:
		return "Scans to"
	}
	return string(f)
}

// profileChoices are the values the form offers for a field.
func profileChoices(f registry.ProfileField) []string {
	switch f {
	case registry.FieldMaxDialect, registry.FieldMinDialect:
		return []string{"SMB1", "2.0.2", "2.1", "3.0", "3.0.2", "3.1.1"}
	case registry.FieldNTLM:
		return []string{"v1", "v2"}
	case registry.FieldFileType:
		return []string{"pdf", "tiff", "jpeg", "xps", "oxps"}
	}
	return []string{"yes", "no"}
}
