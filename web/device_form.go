package web

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
)

// deviceFormView is the add/edit form of a device. Secrets are never put
// back in the form: CredentialsSet says whether some are stored.
type deviceFormView struct {
	New    bool
	Device registry.DeviceView
	// Errors maps a form field to what is wrong with it, shown beside it.
	Errors map[string]string
}

// GET /devices/_new — the add form ("_new" is never a device's name).
func (s *devicePages) deviceNew(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.deviceManager == nil {
		s.fail(w, r, "device editor", ErrNotRunning)
		return
	}
	s.renderDeviceForm(w, http.StatusOK, deviceFormView{New: true}, "")
}

// GET /devices/{name}/edit — the edit form, with what is stored.
func (s *devicePages) deviceEdit(w http.ResponseWriter, r *http.Request, _ actor) {
	d, ok := s.editedDevice(w, r)
	if !ok {
		return
	}
	s.renderDeviceForm(w, http.StatusOK, deviceFormView{Device: d}, "")
}

// editedDevice is the stored device an editor page ({name}) shows; false
// when the page has failed (no editor running, no such device).
func (s *devicePages) editedDevice(w http.ResponseWriter, r *http.Request) (registry.DeviceView, bool) {
	if s.deviceManager == nil || s.fleet == nil {
		s.fail(w, r, "device editor", ErrNotRunning)
		return registry.DeviceView{}, false
	}
	d, err := s.fleet.Device(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, "device", err)
		return registry.DeviceView{}, false
	}
	return d, true
}

func (s *devicePages) renderDeviceForm(w http.ResponseWriter, status int, v deviceFormView, errMsg string) {
	title := "Add a device"
	if !v.New {
		title = "Edit device " + v.Device.Name
	}
	s.render(w, status, "device_form", pageData{Title: title, Nav: "devices", LoggedIn: true, Error: errMsg, Data: v})
}

// POST /devices (add) and POST /devices/{name}/edit (change).
func (s *devicePages) deviceSave(w http.ResponseWriter, r *http.Request, a actor) {
	if s.deviceManager == nil {
		s.fail(w, r, "device editor", ErrNotRunning)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	in := deviceInput(r)
	if name := r.PathValue("name"); name != "" {
		in.Name = name // the edit form's name is the path's
	} else {
		in.New = true
	}
	err := s.deviceManager.PutDevice(r.Context(), in)
	if err != nil {
		v := deviceFormView{New: in.New, Device: registry.DeviceView{Name: in.Name, Address: in.Address, SNMPVersion: in.SNMPVersion,
			V3User: in.V3User, V3AuthProto: in.V3AuthProto, V3PrivProto: in.V3PrivProto, SysName: in.SysName, Workstation: in.Workstation}}
		if !in.New && s.fleet != nil {
			if d, err := s.fleet.Device(r.Context(), in.Name); err == nil {
				v.Device.SNMPCredentials = d.SNMPCredentials
			}
		}
		var fe *scanwarden.FieldError
		if errors.As(err, &fe) {
			v.Errors = map[string]string{fe.Field: fe.Reason}
			s.renderDeviceForm(w, http.StatusBadRequest, v, "Not saved: "+fieldMessage(fe))
			return
		}
		s.fail(w, r, "device", err)
		return
	}
	action := "device.edit"
	if in.New {
		action = "device.add"
	}
	s.audit(r.Context(), a, r, action, in.Name, deviceChanges(r))
	http.Redirect(w, r, "/devices/"+url.PathEscape(in.Name)+"?done=saved", http.StatusSeeOther)
}

// deviceInput reads the device form.
func deviceInput(r *http.Request) DeviceInput {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	sec := func(k string) scanwarden.Secret { return scanwarden.NewSecret(r.PostFormValue(k)) }
	return DeviceInput{Name: f("name"), Address: f("address"), SNMPVersion: f("snmp_version"), Community: sec("community"),
		V3User: f("v3_user"), V3AuthProto: f("v3_auth_proto"), V3Auth: sec("v3_auth"), V3PrivProto: f("v3_priv_proto"),
		V3Priv: sec("v3_priv"), SysName: f("sys_name"), Workstation: f("workstation")}
}

// deviceChanges says for the audit which fields the form sent with a
// value, secrets by name only.
func deviceChanges(r *http.Request) string {
	var out []string
	v3 := strings.TrimSpace(r.PostFormValue("v3_user")) != ""
	for _, k := range []string{"address", "snmp_version", "community", "v3_user", "v3_auth_proto", "v3_auth", "v3_priv_proto", "v3_priv", "sys_name", "workstation"} {
		if strings.HasPrefix(k, "v3_") && !v3 {
			continue // the protocols' defaults are in the form
		}
		if strings.TrimSpace(r.PostFormValue(k)) != "" {
			out = append(out, k)
		}
	}
	return strings.Join(out, ", ")
}

// fieldMessage is a field error in the form's words: the field and why,
// never its value (it may be a secret).
func fieldMessage(fe *scanwarden.FieldError) string {
	return strings.ReplaceAll(fe.Field, "_", " ") + ": " + fe.Reason
}
