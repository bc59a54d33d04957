package web

import (
	"errors"
	"net/http"
	"strconv"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/registry"
)

type destinationRemoveView struct {
	Destination registry.DestinationView
	Held        int      // scans held for it, not yet delivered
	Others      []string // destinations they can be delivered to instead
	Errors      map[string]string
}

// GET /destinations/{name}/remove — what removing it does; with scans
// held for it, what to do with them.
func (s *destinationForms) destinationRemoveForm(w http.ResponseWriter, r *http.Request, _ actor) {
	v, ok := s.destinationRemoveView(w, r)
	if !ok {
		return
	}
	s.render(w, http.StatusOK, "destination_remove", pageData{Title: "Remove destination " + v.Destination.Name,
		Nav: "destinations", LoggedIn: true, Data: v})
}

func (s *destinationForms) destinationRemoveView(w http.ResponseWriter, r *http.Request) (destinationRemoveView, bool) {
	var v destinationRemoveView
	if s.destinationManager == nil || s.fleet == nil {
		s.fail(w, r, "destination editor", ErrNotRunning)
		return v, false
	}
	d, err := s.fleet.Destination(r.Context(), r.PathValue("name"))
	if err != nil {
		s.fail(w, r, "destination", err)
		return v, false
	}
	d.Report = nil
	v.Destination = d
	if v.Held, err = s.destinationManager.Held(r.Context(), d.Name); err != nil {
		s.fail(w, r, "held scans", err)
		return v, false
	}
	if v.Held > 0 {
		all, err := s.fleet.Destinations(r.Context())
		if err != nil {
			s.fail(w, r, "destination list", err)
			return v, false
		}
		for _, o := range all {
			if o.Name != d.Name {
				v.Others = append(v.Others, o.Name)
			}
		}
	}
	return v, true
}

// POST /destinations/{name}/remove — held=move (to=NAME), keep or
// discard says what becomes of its held scans; with scans held and no
// choice made, the question is asked again.
func (s *destinationForms) destinationRemove(w http.ResponseWriter, r *http.Request, a actor) {
	v, ok := s.destinationRemoveView(w, r)
	if !ok {
		return
	}
	name := v.Destination.Name
	held, to := HeldAction(r.PostFormValue("held")), r.PostFormValue("to")
	if v.Held == 0 && held == "" {
		held = HeldKeep
	}
	var err error
	switch held {
	case HeldKeep, HeldDiscard, HeldMove:
		var n int
		if n, err = s.destinationManager.RemoveDestination(r.Context(), name, held, to); err == nil {
			detail := "no held scans"
			switch {
			case held == HeldMove:
				detail = strconv.Itoa(n) + " held scans to be delivered to " + to
			case held == HeldDiscard:
				detail = strconv.Itoa(n) + " held scans discarded"
			case v.Held > 0:
				detail = strconv.Itoa(v.Held) + " held scans kept held"
			}
			s.audit(r.Context(), a, r, "destination.remove", name, detail)
			http.Redirect(w, r, "/destinations?done=removed", http.StatusSeeOther)
			return
		}
	default:
		err = scanwarden.BadField("held", nil, "choose what becomes of the held scans")
	}
	var fe *scanwarden.FieldError
	if !errors.As(err, &fe) {
		s.fail(w, r, "destination", err)
		return
	}
	v.Errors = map[string]string{fe.Field: fe.Reason}
	s.render(w, http.StatusBadRequest, "destination_remove", pageData{Title: "Remove destination " + name,
		Nav: "destinations", LoggedIn: true, Error: "Not removed: " + fieldMessage(fe), Data: v})
}
