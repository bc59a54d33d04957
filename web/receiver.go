package web

import (
	"net/http"

	"github.com/scanwarden/scanwarden/receiver"
)

type receiverView struct {
	Status receiver.StatusView
	State  string
	States []string
	Scans  []receiver.ScanView
}

// receiverPage lists the fallback share's scans by state.
func (s *receiverPages) receiverPage(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.receiver == nil {
		s.fail(w, r, "receiver", ErrNotRunning)
		return
	}
	st, err := s.receiver.Status(r.Context())
	if err != nil {
		s.fail(w, r, "receiver", err)
		return
	}
	v := receiverView{Status: st, State: r.URL.Query().Get("state"),
		States: []string{string(receiver.Held), string(receiver.Incomplete), string(receiver.Refused), string(receiver.Failed),
			string(receiver.Delivering), "received", string(receiver.Delivered)}}
	known := v.State == ""
	for _, x := range v.States {
		known = known || x == v.State
	}
	if !known {
		v.State = ""
	}
	if v.Scans, err = s.receiver.Scans(r.Context(), v.State, 500); err != nil {
		s.fail(w, r, "scans", err)
		return
	}
	flash := map[string]string{"deliver": "Delivery was asked for.", "force": "The incomplete scan will be delivered as it is."}[r.URL.Query().Get("done")]
	s.render(w, http.StatusOK, "receiver", pageData{Title: "Held scans", Nav: "receiver", LoggedIn: true, Flash: flash, Data: v})
}
