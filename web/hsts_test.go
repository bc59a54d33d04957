package web

import "testing"

// TestHSTSOnlyUnderTLS: Strict-Transport-Security is sent when HTTPS is
// the only way in, and never over plain HTTP (a loopback listen).
func TestHSTSOnlyUnderTLS(t *testing.T) {
	for _, tls := range []bool{false, true} {
		s := newSite(t, func(c *Config) { c.TLS = tls })
		for _, p := range []string{"/login", "/healthz", "/static/style.css"} {
			resp, _ := s.get(s.anon(), p)
			if got := resp.Header.Get("Strict-Transport-Security"); (got != "") != tls || (tls && got != "max-age=31536000") {
				t.Errorf("TLS %v %s: Strict-Transport-Security %q", tls, p, got)
			}
		}
	}
}
