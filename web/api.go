package web

import (
	"errors"
	"net/http"
	"strconv"
)

// The JSON API (a contract): the same backends as the pages. A missing
// part answers 503, an unknown name 404, a backend failure 500 with no
// detail (the detail goes to the log).

func (s *base) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeAPIError(w, http.StatusNotFound, "not found")
	case errors.Is(err, ErrNotRunning):
		writeAPIError(w, http.StatusServiceUnavailable, "that part of the daemon is not running")
	default:
		s.log.Error("api", "path", r.URL.Path, "err", err)
		writeAPIError(w, http.StatusInternalServerError, "internal error; see the daemon's log")
	}
}

// limitParam reads ?limit= (default def, at most max).
func limitParam(r *http.Request, def, max int) int {
	n, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || n <= 0 {
		return def
	}
	return min(n, max)
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
