package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/scanwarden/scanwarden/summary"
	"github.com/scanwarden/scanwarden/warning"
)

// Summarizer gives the headline: one sentence of state, the held scans,
// the oldest open incident (package summary builds it; the daemon reads
// its input from the store, as `scanwarden status` does).
type Summarizer interface {
	Summary(ctx context.Context) (summary.Summary, error)
}

// WarningLister lists what will fail days ahead although the checks pass,
// one group per account or volume (package warning), soonest first.
type WarningLister interface {
	Warnings(ctx context.Context) ([]warning.Group, error)
}

// GET /api/v1/warnings — every warning, grouped by what the admin must do
// once, with the destinations and MFPs it will make fail.
func (s *overview) apiWarnings(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.warnings == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	gs, err := s.warnings.Warnings(r.Context())
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"warnings": nonNil(gs)})
}

// AllChecker asks the scheduler to check every destination now, behind
// its caps (max_concurrent, one at a time per file server, the lockout
// budget); it does not wait for the checks. n is how many were queued.
type AllChecker interface {
	CheckAll(ctx context.Context) (n int, err error)
}

// GET /api/v1/summary — the overview's headline.
func (s *overview) apiSummary(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.summary == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	sum, err := s.summary.Summary(r.Context())
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

// POST /api/v1/check-all — every destination checked now (queued).
func (s *overview) apiCheckAll(w http.ResponseWriter, r *http.Request, a actor) {
	if s.allChecker == nil {
		s.apiFail(w, r, ErrNotRunning)
		return
	}
	n, err := s.allChecker.CheckAll(r.Context())
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	s.audit(r.Context(), a, r, "destinations.check_all", "", strconv.Itoa(n)+" queued")
	writeJSON(w, http.StatusAccepted, map[string]int{"queued": n})
}

// POST /check-all — the overview's "Check all now".
func (s *overview) checkAll(w http.ResponseWriter, r *http.Request, a actor) {
	if s.allChecker == nil {
		s.fail(w, r, "scheduler", ErrNotRunning)
		return
	}
	n, err := s.allChecker.CheckAll(r.Context())
	if err != nil {
		s.fail(w, r, "scheduler", err)
		return
	}
	s.audit(r.Context(), a, r, "destinations.check_all", "", strconv.Itoa(n)+" queued")
	http.Redirect(w, r, "/?done=check-all&n="+strconv.Itoa(n), http.StatusSeeOther)
}
