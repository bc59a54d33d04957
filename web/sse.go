package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	scanwarden "github.com/scanwarden/scanwarden"
)

// runEvents streams a run over server-sent events: one "step" event per
// completed step (those already done first), then "verdict" with the whole
// report, or "failed", then "end".
func (s *destinationPages) runEvents(w http.ResponseWriter, r *http.Request, _ actor) {
	run := s.runs.get(r.PathValue("id"))
	if run == nil {
		http.Error(w, "no such check run (finished runs are kept 10 minutes)", http.StatusNotFound)
		return
	}
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // a check may take longer than the server's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return err
		}
		return rc.Flush()
	}
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	sent := 0
	for {
		steps, done, changed := run.snapshot(sent)
		for _, st := range steps {
			if err := send("step", st); err != nil {
				return
			}
			sent++
		}
		if done {
			rep, err := run.result()
			var fe *scanwarden.FieldError
			switch {
			case errors.As(err, &fe):
				// Test before saving: a field of the form is wrong.
				send("failed", map[string]string{"error": fieldMessage(fe), "field": fe.Field})
			case err != nil:
				s.log.Error("check", "destination", run.dest, "err", err)
				send("failed", map[string]string{"error": "the check could not run; the daemon's log has the details"})
			default:
				send("verdict", rep)
			}
			send("end", map[string]string{})
			return
		}
		select {
		case <-changed:
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}
