package web

import (
	"net/http"
	"strconv"
)

// scanDeliver asks for a held scan to be delivered now.
func (s *receiverPages) scanDeliver(w http.ResponseWriter, r *http.Request, a actor) {
	s.scanAction(w, r, a, "deliver")
}

// scanForce delivers an incomplete scan as it is.
func (s *receiverPages) scanForce(w http.ResponseWriter, r *http.Request, a actor) {
	s.scanAction(w, r, a, "force")
}

func (s *receiverPages) scanAction(w http.ResponseWriter, r *http.Request, a actor, action string) {
	if s.receiver == nil {
		s.fail(w, r, "receiver", ErrNotRunning)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.fail(w, r, "scan", ErrNotFound)
		return
	}
	if action == "force" {
		err = s.receiver.Force(r.Context(), id)
	} else {
		err = s.receiver.Deliver(r.Context(), id)
	}
	if err != nil {
		s.fail(w, r, "scan", err)
		return
	}
	s.audit(r.Context(), a, r, "scan."+action, strconv.FormatInt(id, 10), "")
	http.Redirect(w, r, "/receiver?done="+action, http.StatusSeeOther)
}
