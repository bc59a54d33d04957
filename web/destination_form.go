package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/smbcheck"
)

// destinationFormView is the add/edit form of a destination. The password
// is never put back in the form: PasswordSet and PasswordUnreadable say
// what is stored.
type destinationFormView struct {
	New         bool
	Destination registry.DestinationView
	Folder      string   // as typed, or the stored one as \\host\share\path
	Devices     []string // the device choices
	// Errors maps a form field to what is wrong with it, shown beside it.
	Errors map[string]string
	CanTry bool
	// Tried is the report of "Test before saving" when the page was sent
	// without script (nil: not tried).
	Tried *smbcheck.Report
}

// GET /destinations/_new — the add form (?device= preselects one).
func (s *destinationForms) destinationNew(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.destinationManager == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return
	}
	v := destinationFormView{New: true, Destination: registry.DestinationView{Device: r.URL.Query().Get("device"), Auth: string(scanwarden.AuthNTLM)}}
	s.renderDestinationForm(w, r, http.StatusOK, v, "")
}

// GET /destinations/{name}/edit — the edit form, with what is stored.
func (s *destinationForms) destinationEdit(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.destinationManager == nil || s.fleet == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return
	}
	d, err := s.fleet.Destination(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, "destination", err)
		return
	}
	d.Report, d.Last = nil, nil
	s.renderDestinationForm(w, r, http.StatusOK, destinationFormView{Destination: d, Folder: mfpFolder(d)}, "")
}

// mfpFolder is the destination's folder as a Kyocera shows it:
// \\host\share\path (a port other than 445 as host:port).
func mfpFolder(d registry.DestinationView) string {
	host := d.Host
	if scanwarden.NonDefaultPort(d.Port) {
		host = strings.Trim(host, "[]")
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		host += ":" + strconv.Itoa(d.Port)
	}
	s := `\\` + host + `\` + d.Share
	if d.Path != "" {
		s += `\` + strings.ReplaceAll(d.Path, "/", `\`)
	}
	return s
}

func (s *destinationForms) renderDestinationForm(w http.ResponseWriter, r *http.Request, status int, v destinationFormView, errMsg string) {
	if s.fleet != nil {
		devs, err := s.fleet.Devices(r.Context())
		if err != nil {
			s.log.Error("destination form: devices", "err", err)
		}
		for _, d := range devs {
			v.Devices = append(v.Devices, d.Name)
		}
	}
	v.CanTry = s.destinationManager != nil
	title := "Add a destination"
	if !v.New {
		title = "Edit destination " + v.Destination.Name
	}
	s.render(w, status, "destination_form", pageData{Title: title, Nav: "destinations", LoggedIn: true, Error: errMsg, Data: v})
}

// POST /destinations (add) and POST /destinations/{name}/edit (change).
func (s *destinationForms) destinationSave(w http.ResponseWriter, r *http.Request, a actor) {
	if s.destinationManager == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return
	}
	in, ok := s.destinationForm(w, r)
	if !ok {
		return
	}
	if err := s.destinationManager.PutDestination(r.Context(), in); err != nil {
		s.destinationFormError(w, r, in, err)
		return
	}
	action := "destination.edit"
	if in.New {
		action = "destination.add"
	}
	s.audit(r.Context(), a, r, action, in.Name, destinationChanges(r, in))
	http.Redirect(w, r, "/destinations/"+url.PathEscape(in.Name)+"?done=saved", http.StatusSeeOther)
}

// destinationForm reads the destination form (the edit form's name is the
// path's).
func (s *destinationForms) destinationForm(w http.ResponseWriter, r *http.Request) (DestinationInput, bool) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return DestinationInput{}, false
	}
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	in := DestinationInput{Name: f("name"), Folder: f("folder"), User: r.PostFormValue("user"), Device: f("device"),
		Workstation: f("workstation"), Auth: f("auth")}
	if name := r.PathValue("name"); name != "" {
		in.Name = name
	} else if r.PostFormValue("original") != "" {
		in.Name = r.PostFormValue("original") // Test before saving from an edit form
	} else {
		in.New = true
	}
	pw := r.PostFormValue("password")
	switch {
	case r.PostFormValue("no_password") == "on":
		if pw != "" {
			s.destinationFormError(w, r, in, scanwarden.BadField("password", nil, "a password and \"no password\" exclude each other"))
			return in, false
		}
	case pw == "" && !in.New:
		in.KeepPassword = true
	case pw == "":
		s.destinationFormError(w, r, in, scanwarden.BadField("password", nil, "enter the password the MFP stores, or tick \"no password\""))
		return in, false
	default:
		in.Password = scanwarden.NewSecret(pw)
	}
	return in, true
}

// destinationFormError shows the form again with the error beside its
// field, or the error page.
func (s *destinationForms) destinationFormError(w http.ResponseWriter, r *http.Request, in DestinationInput, err error) {
	var fe *scanwarden.FieldError
	if !errors.As(err, &fe) {
		s.fail(w, r, "destination", err)
		return
	}
	v := s.formAgain(r.Context(), in)
	v.Errors = map[string]string{fe.Field: fe.Reason}
	s.renderDestinationForm(w, r, http.StatusBadRequest, v, "Not saved: "+fieldMessage(fe))
}

// formAgain is the form as it was sent (the password never), with what is
// stored about the password.
func (s *destinationForms) formAgain(ctx context.Context, in DestinationInput) destinationFormView {
	v := destinationFormView{New: in.New, Folder: in.Folder, Destination: registry.DestinationView{Name: in.Name, User: in.User,
		Device: in.Device, Workstation: in.Workstation, Auth: in.Auth}}
	if !in.New && s.fleet != nil {
		if d, err := s.fleet.Destination(ctx, in.Name); err == nil {
			v.Destination.PasswordSet, v.Destination.PasswordUnreadable = d.PasswordSet, d.PasswordUnreadable
			v.Destination.DisplayName, v.Destination.Source = d.DisplayName, d.Source
		}
	}
	return v
}

// destinationChanges says for the audit what the form set, the password
// only as "password set", "password kept" or "no password".
func destinationChanges(r *http.Request, in DestinationInput) string {
	out := []string{"folder " + in.Folder, "user " + in.User}
	switch {
	case in.KeepPassword:
		out = append(out, "password kept")
	case in.Password.IsZero():
		out = append(out, "no password")
	default:
		out = append(out, "password set")
	}
	if in.Device != "" {
		out = append(out, "device "+in.Device)
	}
	if in.Workstation != "" {
		out = append(out, "workstation "+in.Workstation)
	}
	if in.Auth != "" {
		out = append(out, "auth "+in.Auth)
	}
	return strings.Join(out, ", ")
}
