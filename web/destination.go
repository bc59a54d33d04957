package web

import (
	"net/http"
	"slices"
	"strings"

	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/warning"
)

type destinationView struct {
	Destination registry.DestinationView
	History     []registry.ReportView
	CanCheck    bool
	CanEdit     bool            // an Editor is wired: the auth form shows
	CanManage   bool            // a DestinationManager is wired: edit and remove show
	Warnings    []warning.Group // the ones this destination is in
}

// destinationPage shows one destination: the last report step by step, its
// history, and Run check now.
func (s *destinationPages) destinationPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.fail(w, r, "destination", ErrNotRunning)
		return
	}
	name := r.PathValue("name")
	d, err := s.fleet.Destination(r.Context(), name)
	if err != nil {
		s.fail(w, r, "destination", err)
		return
	}
	v := destinationView{Destination: d, CanCheck: s.checker != nil, CanEdit: s.editor != nil,
		CanManage: s.destinationManager != nil}
	if v.History, err = s.fleet.History(r.Context(), d.Name, 20); err != nil {
		s.log.Error("destination history", "destination", d.Name, "err", err)
	}
	if wl := s.warnings; wl != nil {
		gs, err := wl.Warnings(r.Context())
		if err != nil {
			s.log.Error("destination warnings", "destination", d.Name, "err", err)
		}
		for _, g := range gs {
			if slices.ContainsFunc(g.Destinations, func(n string) bool { return strings.EqualFold(n, d.Name) }) {
				v.Warnings = append(v.Warnings, g)
			}
		}
	}
	flash := flashFor(r.URL.Query().Get("done"))
	if r.URL.Query().Get("checked") != "" {
		flash = "The check ran; its report is below."
	}
	s.render(w, http.StatusOK, "destination", pageData{Title: "Destination " + d.Name, Nav: "destinations", LoggedIn: true,
		Flash: flash, Data: v})
}
