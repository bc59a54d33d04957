package web

import (
	"net/http"
	"sort"
	"strconv"

	scanwarden "github.com/scanwarden/scanwarden"
	"github.com/scanwarden/scanwarden/incident"
	"github.com/scanwarden/scanwarden/receiver"
	"github.com/scanwarden/scanwarden/registry"
	"github.com/scanwarden/scanwarden/summary"
)

type dashboardView struct {
	Summary      *summary.Summary // nil when it could not be read
	Devices      []registry.DeviceView
	Destinations []registry.DestinationView
	Failing      int
	Incidents    []incident.View
	Receiver     *receiver.StatusView
	Faults       []scanwarden.Fault
	Problems     []string // parts that could not be read
	// Start is the getting-started list (nil once devices and
	// destinations exist).
	Start []startStep
}

// dashboard is the fleet at a glance: failing destinations first.
func (s *overview) dashboard(w http.ResponseWriter, r *http.Request, _ actor) {
	ctx := r.Context()
	var v dashboardView
	problem := func(what string, err error) {
		s.log.Error("dashboard", "part", what, "err", err)
		v.Problems = append(v.Problems, "Could not read "+what+".")
	}
	if sm := s.summary; sm != nil {
		if sum, err := sm.Summary(ctx); err != nil {
			problem("the summary", err)
		} else {
			v.Summary = &sum
		}
	}
	if f := s.fleet; f != nil {
		var err error
		if v.Devices, err = f.Devices(ctx); err != nil {
			problem("the devices", err)
		}
		if v.Destinations, err = f.Destinations(ctx); err != nil {
			problem("the destinations", err)
		}
	}
	sort.SliceStable(v.Destinations, func(i, j int) bool {
		return rank(v.Destinations[i]) < rank(v.Destinations[j])
	})
	for _, d := range v.Destinations {
		if rank(d) == 0 {
			v.Failing++
		}
	}
	if in := s.incidents; in != nil {
		var err error
		if v.Incidents, err = in.Incidents(ctx, "open", 50); err != nil {
			problem("the incidents", err)
		}
	}
	if rc := s.receiver; rc != nil {
		st, err := rc.Status(ctx)
		if err != nil {
			problem("the receiver", err)
		} else {
			v.Receiver = &st
		}
	}
	if st := s.status; st != nil {
		var err error
		if v.Faults, err = st.Faults(ctx); err != nil {
			problem("the daemon's faults", err)
		}
	}
	v.Start = s.gettingStarted(ctx, v)
	flash := ""
	if r.URL.Query().Get("done") == "check-all" {
		flash = "Every destination is queued for a check (" + r.URL.Query().Get("n") + "); the results appear here as they come in."
		if _, err := strconv.Atoi(r.URL.Query().Get("n")); err != nil {
			flash = "Every destination is queued for a check; the results appear here as they come in."
		}
	}
	s.render(w, http.StatusOK, "dashboard", pageData{Title: "Overview", Nav: "overview", LoggedIn: true, Flash: flash, Data: v})
}

// rank orders destinations: failing, never checked, fine.
func rank(d registry.DestinationView) int {
	switch {
	case d.Last == nil:
		return 1
	case d.Last.Verdict.Cause != scanwarden.CauseOK:
		return 0
	}
	return 2
}
