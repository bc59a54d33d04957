package web

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Request bodies are bounded in size and in time: the site answers anyone
// on the LAN, and login and setup read a body before anyone is known.

// maxForm bounds every request body but an address-book upload's: the
// forms are a few short fields.
const maxForm = 64 << 10

// maxUpload bounds the address-book upload's body: the export and its form.
const maxUpload = maxExport + 1<<20

// bodyLimit is the most a request's body may hold.
func bodyLimit(r *http.Request) int64 {
	if r.Method == http.MethodPost && r.URL.Path == "/import" {
		return maxUpload
	}
	return maxForm
}

// limitBodies refuses a body larger than its route allows — at once with
// 413 when Content-Length says so, else the handler's read fails past the
// limit — and gives the body BodyTimeout to arrive: a client that trickles
// it is cut when the time is up. Once the body has been read net/http
// lifts the deadline itself (it starts its background read), so a long
// check or an event stream is not cut by it.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		limit := bodyLimit(r)
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close")
			http.Error(w, "request body larger than "+strconv.FormatInt(limit>>10, 10)+" KiB", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
		next.ServeHTTP(w, r)
	})
}

// formOK parses the form of a request read before authentication and
// answers a body that is too large (413) or too slow (408) itself: such a
// request is nobody's failed login.
func (s *base) formOK(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseForm()
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, "request body larger than "+strconv.FormatInt(tooBig.Limit>>10, 10)+" KiB", http.StatusRequestEntityTooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		w.Header().Set("Connection", "close")
		http.Error(w, "request body not sent in time", http.StatusRequestTimeout)
	default:
		http.Error(w, "unreadable form", http.StatusBadRequest)
	}
	return false
}
