package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/scanwarden/scanwarden/registry"
)

type destinationsView struct {
	Columns      []column
	Destinations []registry.DestinationView
	CanEdit      bool // a DestinationManager is wired: add, edit and remove show
}

// destinationsPage lists the destinations, sortable, each with its last
// verdict.
func (s *destinationPages) destinationsPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.fleet == nil {
		s.fail(w, r, "destination list", ErrNotRunning)
		return
	}
	ds, err := s.fleet.Destinations(r.Context())
	if err != nil {
		s.fail(w, r, "destination list", err)
		return
	}
	name := func(d registry.DestinationView) string { return d.Name }
	cols := sortList(r.URL.Query(), "/destinations", "state", ds, name, []sortable[registry.DestinationView]{
		{column{Key: "name", Label: "Destination"}, name},
		{column{Key: "device", Label: "Device"}, func(d registry.DestinationView) string { return d.Device }},
		{column{Key: "folder", Label: "Folder", Wide: true}, func(d registry.DestinationView) string { return d.Host + "/" + d.Share + "/" + d.Path }},
		{column{Key: "user", Label: "User", Wide: true}, func(d registry.DestinationView) string { return d.User }},
		{column{Key: "state", Label: "Last verdict"}, destinationState},
		{column{Key: "checked", Label: "Checked"}, lastChecked},
	})
	s.render(w, http.StatusOK, "destinations", pageData{Title: "Destinations", Nav: "destinations", LoggedIn: true,
		Flash: flashFor(r.URL.Query().Get("done")), Data: destinationsView{Columns: cols, Destinations: ds, CanEdit: s.destinationManager != nil}})
}

// destinationState orders destinations as the overview does: a password to
// enter, failing, never checked, fine.
func destinationState(d registry.DestinationView) string {
	if d.PasswordUnreadable != "" {
		return "0"
	}
	return strconv.Itoa(1+rank(d)) + " " + verdictCause(d)
}

// lastChecked sorts by the newest check's time, never checked first.
func lastChecked(d registry.DestinationView) string {
	if d.Last == nil {
		return ""
	}
	return d.Last.At.UTC().Format(time.RFC3339Nano)
}

func verdictCause(d registry.DestinationView) string {
	if d.Last == nil {
		return ""
	}
	return string(d.Last.Verdict.Cause)
}
