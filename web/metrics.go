package web

import "net/http"

// metrics serves the daemon's Prometheus registry behind auth.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request, _ actor) {
	if s.cfg.Metrics == nil {
		http.Error(w, "metrics are not enabled", http.StatusServiceUnavailable)
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}
