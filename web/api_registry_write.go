package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	scanwarden "github.com/scanwarden/scanwarden"
)

// The registry's writes over the API (admin scope, audited as the page's):
//
//	POST /api/v1/devices                      add a device
//	POST /api/v1/devices/{name}               change it (empty fields kept)
//	POST /api/v1/devices/{name}/remove        {"with_destinations": true}
//	POST /api/v1/destinations                 add a destination
//	POST /api/v1/destinations/{name}          change it ("password" left out: kept)
//	POST /api/v1/destinations/{name}/remove   {"held": "keep"|"move"|"discard", "to": NAME}
//
// A value that cannot be stored answers 400 {"error": …, "field": …}.

type apiDeviceBody struct {
	Name        string `json:"name"`
	Address     string `json:"address"`
	SNMPVersion string `json:"snmp_version"`
	Community   string `json:"community"`
	V3User      string `json:"v3_user"`
	V3AuthProto string `json:"v3_auth_proto"`
	V3Auth      string `json:"v3_auth"`
	V3PrivProto string `json:"v3_priv_proto"`
	V3Priv      string `json:"v3_priv"`
	SysName     string `json:"sys_name"`
	Workstation string `json:"workstation"`
}

type apiDestinationBody struct {
	Name        string  `json:"name"`
	Folder      string  `json:"folder"`
	User        string  `json:"user"`
	Password    *string `json:"password"` // null or left out: kept (a change); "" : none
	Device      string  `json:"device"`
	Workstation string  `json:"workstation"`
	Auth        string  `json:"auth"`
}

// decodeBody reads a JSON object into v; false (answered) when it is not one.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeAPIError(w, http.StatusUnsupportedMediaType, "send application/json")
		return false
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeAPIError(w, http.StatusBadRequest, "body: "+err.Error())
		return false
	}
	return true
}

// apiWriteFail answers a failed write: a field error names its field.
func (s *base) apiWriteFail(w http.ResponseWriter, r *http.Request, err error) {
	var fe *scanwarden.FieldError
	if errors.As(err, &fe) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fieldMessage(fe), "field": fe.Field})
		return
	}
	s.apiFail(w, r, err)
}

// writeTarget is what a put is for: the name in the path (a change,
// audited as KIND.edit), else the body's name, new (KIND.add).
func writeTarget(r *http.Request, kind, bodyName string) (name, action string, isNew bool) {
	if name := r.PathValue("name"); name != "" {
		return name, kind + ".edit", false
	}
	return bodyName, kind + ".add", true
}

// answerStored audits a write of name and answers with it as stored now
// (read back through read).
func answerStored[T any](s *base, w http.ResponseWriter, r *http.Request, a actor, action, name, detail string,
	read func(context.Context, string) (T, error)) {
	s.audit(r.Context(), a, r, action, name, detail)
	v, err := read(r.Context(), name)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// POST /api/v1/devices and /api/v1/devices/{name}
func (s *devicePages) apiDevicePut(w http.ResponseWriter, r *http.Request, a actor) {
	if s.deviceManager == nil || s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	var body apiDeviceBody
	if !decodeBody(w, r, &body) {
		return
	}
	in := DeviceInput{Address: body.Address, SNMPVersion: body.SNMPVersion, Community: scanwarden.NewSecret(body.Community),
		V3User: body.V3User, V3AuthProto: body.V3AuthProto, V3Auth: scanwarden.NewSecret(body.V3Auth), V3PrivProto: body.V3PrivProto,
		V3Priv: scanwarden.NewSecret(body.V3Priv), SysName: body.SysName, Workstation: body.Workstation}
	var action string
	in.Name, action, in.New = writeTarget(r, "device", body.Name)
	if err := s.deviceManager.PutDevice(r.Context(), in); err != nil {
		s.apiWriteFail(w, r, err)
		return
	}
	var set []string
	for k, v := range map[string]string{"address": body.Address, "snmp_version": body.SNMPVersion, "community": body.Community,
		"v3_user": body.V3User, "v3_auth": body.V3Auth, "v3_priv": body.V3Priv, "sys_name": body.SysName, "workstation": body.Workstation} {
		if v != "" {
			set = append(set, k)
		}
	}
	answerStored(s.base, w, r, a, action, in.Name, strings.Join(slices.Sorted(slices.Values(set)), ", "), s.fleet.Device)
}

// POST /api/v1/devices/{name}/remove
func (s *devicePages) apiDeviceRemove(w http.ResponseWriter, r *http.Request, a actor) {
	if s.deviceManager == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	var body struct {
		WithDestinations bool `json:"with_destinations"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	name := r.PathValue("name")
	if err := s.deviceManager.RemoveDevice(r.Context(), name, body.WithDestinations); err != nil {
		s.apiWriteFail(w, r, err)
		return
	}
	detail := ""
	if body.WithDestinations {
		detail = "with its destinations"
	}
	s.audit(r.Context(), a, r, "device.remove", name, detail)
	writeJSON(w, http.StatusOK, map[string]string{"removed": name})
}

// POST /api/v1/destinations and /api/v1/destinations/{name}
func (s *destinationPages) apiDestinationPut(w http.ResponseWriter, r *http.Request, a actor) {
	if s.destinationManager == nil || s.fleet == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	var body apiDestinationBody
	if !decodeBody(w, r, &body) {
		return
	}
	in := DestinationInput{Folder: body.Folder, User: body.User, Device: body.Device,
		Workstation: body.Workstation, Auth: body.Auth}
	var action string
	in.Name, action, in.New = writeTarget(r, "destination", body.Name)
	switch {
	case body.Password != nil:
		in.Password = scanwarden.NewSecret(*body.Password)
	case in.New:
		s.apiWriteFail(w, r, scanwarden.BadField("password", nil, `give the password the MFP stores ("" for none)`))
		return
	default:
		in.KeepPassword = true
	}
	if err := s.destinationManager.PutDestination(r.Context(), in); err != nil {
		s.apiWriteFail(w, r, err)
		return
	}
	answerStored(s.base, w, r, a, action, in.Name, destinationChanges(r, in), s.fleet.Destination)
}

// POST /api/v1/destinations/{name}/remove
func (s *destinationPages) apiDestinationRemove(w http.ResponseWriter, r *http.Request, a actor) {
	if s.destinationManager == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	var body struct {
		Held HeldAction `json:"held"`
		To   string     `json:"to"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	name := r.PathValue("name")
	switch body.Held {
	case "":
		n, err := s.destinationManager.Held(r.Context(), name)
		if err != nil {
			s.apiFail(w, r, err)
			return
		}
		if n > 0 {
			s.apiWriteFail(w, r, scanwarden.BadField("held", nil, "scans are held for it: say keep, move (with to) or discard"))
			return
		}
		body.Held = HeldKeep
	case HeldKeep, HeldMove, HeldDiscard:
	default:
		s.apiWriteFail(w, r, scanwarden.BadField("held", string(body.Held), "want keep, move or discard"))
		return
	}
	n, err := s.destinationManager.RemoveDestination(r.Context(), name, body.Held, body.To)
	if err != nil {
		s.apiWriteFail(w, r, err)
		return
	}
	s.audit(r.Context(), a, r, "destination.remove", name, "held scans: "+string(body.Held)+" "+body.To)
	writeJSON(w, http.StatusOK, map[string]any{"removed": name, "held": body.Held, "scans": n})
}
