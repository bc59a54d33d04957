package web

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/config"
)

type settingsView struct {
	Sections  []config.SettingsSection
	Tokens    []scanwarden.APIToken
	NewToken  string // shown once, right after it was made
	TokenName string
	BadField  string // section.key of the field an error is about
}

// settingsPage shows the stored settings (secrets as set / not set), the
// API tokens and the password form.
func (s *settingsPages) settingsPage(w http.ResponseWriter, r *http.Request, _ actor) {
	s.renderSettings(w, r, http.StatusOK, settingsView{}, flashFor(r.URL.Query().Get("done")), "")
}

func flashFor(done string) string {
	return map[string]string{
		"saved":    "Saved.",
		"removed":  "Removed.",
		"revoked":  "The token is revoked.",
		"password": "The admin password is changed; every other session has ended.",
	}[done]
}

func (s *settingsPages) renderSettings(w http.ResponseWriter, r *http.Request, status int, v settingsView, flash, errMsg string) {
	if s.settings != nil {
		var err error
		if v.Sections, err = s.settings.Settings(r.Context()); err != nil {
			s.log.Error("read settings", "err", err)
			errMsg = strings.TrimSpace(errMsg + " Could not read the settings.")
		}
	}
	toks, err := s.auth.Tokens(r.Context())
	if err != nil {
		s.log.Error("read tokens", "err", err)
	}
	sort.Slice(toks, func(i, j int) bool { return toks[i].Name < toks[j].Name })
	v.Tokens = toks
	s.render(w, status, "settings", pageData{Title: "Settings", Nav: "settings", LoggedIn: true, Flash: flash, Error: errMsg, Data: v})
}

// settingsSave stores one section. Only the section's own keys are read.
func (s *settingsPages) settingsSave(w http.ResponseWriter, r *http.Request, a actor) {
	if s.settings == nil {
		s.fail(w, r, "settings", ErrNotRunning)
		return
	}
	name := r.PathValue("section")
	secs, err := s.settings.Settings(r.Context())
	if err != nil {
		s.fail(w, r, "settings", err)
		return
	}
	var sec *config.SettingsSection
	for i := range secs {
		if secs[i].Name == name {
			sec = &secs[i]
		}
	}
	if sec == nil {
		s.fail(w, r, "settings section", ErrNotFound)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	values := map[string]string{}
	var changed []string
	for _, f := range sec.Fields {
		v, ok := r.PostForm[f.Key]
		if !ok {
			continue
		}
		val := strings.TrimSpace(v[0])
		if f.Secret && val == "" {
			continue // "" keeps the stored secret
		}
		if !f.Secret && val == f.Value {
			continue
		}
		values[f.Key] = val
		changed = append(changed, f.Key)
	}
	if len(values) > 0 {
		if err := s.settings.Set(r.Context(), name, values); err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				s.renderSettings(w, r, http.StatusBadRequest, settingsView{BadField: fe.Section + "." + fe.Field}, "",
					"Not saved: "+fe.Field+": "+fe.Reason)
				return
			}
			s.fail(w, r, "settings", err)
			return
		}
		s.audit(r.Context(), a, r, "settings.set", name, strings.Join(changed, ", "))
	}
	http.Redirect(w, r, "/settings?done=saved#"+name, http.StatusSeeOther)
}

// settingsTest sends a test notification and shows what happened.
func (s *settingsPages) settingsTest(w http.ResponseWriter, r *http.Request, a actor) {
	if s.settings == nil {
		s.fail(w, r, "settings", ErrNotRunning)
		return
	}
	ch := r.PathValue("channel")
	msg, err := s.settings.SendTest(r.Context(), ch)
	s.audit(r.Context(), a, r, "notify.test", ch, errString(err))
	if err != nil {
		s.renderSettings(w, r, http.StatusOK, settingsView{}, "", "The test "+ch+" failed: "+err.Error())
		return
	}
	if msg == "" {
		msg = "The test " + ch + " was sent."
	}
	s.renderSettings(w, r, http.StatusOK, settingsView{}, msg, "")
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}
