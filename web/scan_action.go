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
	id, ok := s.scanID(w, r)
	if !ok {
		return
	}
	var err error
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

// scanID is the held scan a scan page ({id}) is about; false when the
// page has failed (no receiver running, not a scan's id).
func (s *receiverPages) scanID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	if s.receiver == nil {
		s.fail(w, r, "receiver", ErrNotRunning)
		return 0, false
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		s.fail(w, r, "scan", ErrNotFound)
		return 0, false
	}
	return id, true
}
